package main

import (
	"errors"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/jobmesh/jobmesh/meshclient"
)

// addAPIFlag gives cmd and its subcommands --api URL: the node to talk to,
// instead of the one the repo's api file names.
func addAPIFlag(g *globals, cmd *cobra.Command) *cobra.Command {
	cmd.PersistentFlags().StringVar(&g.apiURL, "api", "", "the node's API URL, e.g. http://127.0.0.1:5001 (default: the repo's api file, written while a daemon runs on it); the token is still the repo's api.token when it has one")
	return cmd
}

// client is a client of the node --api names, else of the daemon running
// on --repo.
func (g *globals) client() (*meshclient.Client, error) {
	if g.apiURL == "" {
		return meshclient.ForRepo(g.repo)
	}
	tok, err := meshclient.RepoToken(g.repo)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return meshclient.New(g.apiURL, meshclient.WithToken(tok)), nil
}
