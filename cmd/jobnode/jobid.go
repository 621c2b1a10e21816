package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jobmesh/jobmesh/meshclient"
)

// minJobIDPrefix is the fewest hex digits a job ID prefix may have.
const minJobIDPrefix = 4

// jobIDLen is the length of a whole job ID: 64 hex digits.
const jobIDLen = 64

// errUnknownJob: no job the node knows has the ID or prefix given.
var errUnknownJob = errors.New("no such job")

// resolveJobID turns the job ID argument of a command into a whole job ID,
// as git and docker do: a whole ID as it is, a unique prefix of at least
// minJobIDPrefix hex digits through the node's list of jobs. Every command
// that takes a job ID resolves it here.
func resolveJobID(ctx context.Context, c *meshclient.Client, arg string) (string, error) {
	id := strings.ToLower(arg)
	if strings.Trim(id, "0123456789abcdef") != "" {
		return "", usageError(fmt.Errorf("job ID %q: want hex digits", arg))
	}
	switch {
	case len(id) == jobIDLen:
		return id, nil
	case len(id) > jobIDLen:
		return "", usageError(fmt.Errorf("job ID %q: longer than %d hex digits", arg, jobIDLen))
	case len(id) < minJobIDPrefix:
		return "", usageError(fmt.Errorf("job ID %q: give at least %d hex digits", arg, minJobIDPrefix))
	}
	js, err := c.Jobs(ctx)
	if err != nil {
		return "", fmt.Errorf("resolving job ID prefix %s: %w", id, err)
	}
	var matches []string
	for _, j := range js {
		if strings.HasPrefix(j.ID, id) {
			matches = append(matches, j.ID)
		}
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("%w: no job this node knows has an ID starting with %s", errUnknownJob, id)
	case 1:
		return matches[0], nil
	}
	return "", usageError(fmt.Errorf("job ID prefix %s is ambiguous: it matches %d jobs:\n  %s",
		id, len(matches), strings.Join(matches, "\n  ")))
}
