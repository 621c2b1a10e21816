package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/meshclient"
)

func newJobLogsCmd(g *globals) *cobra.Command {
	var followFlag bool
	cmd := &cobra.Command{
		Use:   "logs ID",
		Short: "Print a job's event history, one line each with its time; --follow streams it until the job ends",
		Long: `Print a job's event history (its ID or a unique prefix of at least 4 hex
digits): each record the mesh wrote for it (published, MacroJobs taken,
MicroJobs committed and disclosed, checks, disputes, redos, the check seed
revealed, the verdict, holders, the settlement), one line each: the time,
the author's peer ID and what happened. --follow prints new events as
they come until the job ends, then exits with the job's code.

` + exitCodesHelp + `
(The job's codes apply with --follow.)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, d, err := describeJob(cmd.Context(), g, args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if !followFlag {
				printEvents(out, d, map[string]bool{})
				return nil
			}
			return followLogs(cmd.Context(), c, d, out)
		},
	}
	cmd.Flags().BoolVarP(&followFlag, "follow", "f", false, "print new events until the job ends; exit with the job's code")
	return cmd
}

// printEvents prints d's events not in seen, which it updates.
func printEvents(out io.Writer, d apiv1.JobDescription, seen map[string]bool) {
	if d.EventsLeftOut > 0 && len(seen) == 0 {
		fmt.Fprintf(out, "(%d older events not listed)\n", d.EventsLeftOut)
	}
	for _, e := range d.Events {
		l := eventLine(e)
		if seen[l] {
			continue
		}
		seen[l] = true
		fmt.Fprintln(out, l)
	}
}

// followLogs prints job d's events, and new ones as they come, until the
// job is done (meshclient.Done); its error carries the job's exit code
// (jobEnd).
func followLogs(ctx context.Context, c *meshclient.Client, d apiv1.JobDescription, out io.Writer) error {
	nid, err := c.ID(ctx)
	if err != nil {
		return err
	}
	poll := c.Poll
	if poll <= 0 {
		poll = time.Second
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	seen := map[string]bool{}
	for {
		printEvents(out, d, seen)
		if meshclient.Done(d.Job, nid.Escrow) {
			fmt.Fprintf(out, "job %s %s\n", d.Job.ID, d.Job.State)
			return jobEnd(d.Job)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if d, err = c.Describe(ctx, d.Job.ID); err != nil {
			return err
		}
	}
}
