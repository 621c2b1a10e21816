package main

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// errSilent marks an error already reported to the user.
var errSilent = errors.New("reported")

type globals struct {
	repo     string
	logLevel string
}

func defaultRepo() string {
	if r := os.Getenv("JOBMESH_REPO"); r != "" {
		return r
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ".jobmesh"
	}
	return filepath.Join(home, ".jobmesh")
}

func newRootCmd() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "jobnode",
		Short:         "jobmesh node: a peer-to-peer compute job mesh",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildVersion().text(),
	}
	root.SetVersionTemplate("{{.Version}}")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	root.PersistentFlags().StringVar(&g.repo, "repo", defaultRepo(), "repo directory (env JOBMESH_REPO)")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	root.AddCommand(
		newInitCmd(g),
		newDaemonCmd(g, "bootstrap", "Run a bootstrap node: a stable DHT server with peer exchange"),
		newDaemonCmd(g, "process", "Run a processor: advertise this node's hardware and take work (it can submit jobs too)"),
		newDaemonCmd(g, "client", "Run a client: join the mesh and submit jobs, without processing"),
		newIDCmd(g),
		newPeersCmd(g),
		newNodesCmd(g),
		newQueueCmd(g),
		newDemoCmd(g),
		newWalletCmd(g),
		newStakeCmd(g),
		newExampleCmd(),
		newJobCmd(g),
		newDashboardCmd(g),
		newCheckSimCmd(),
		newChaosCmd(),
		newVersionCmd(),
	)
	return root
}

func (g *globals) logger() *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(g.logLevel)); err != nil {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}
