package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/meshclient"
)

func newJobDescribeCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "describe ID",
		Short: "Show everything the node knows of a job: plan, MicroJobs and their states, who ran what, errors, settlement, events",
		Long: `Show everything the node knows of a job (its ID or a unique prefix of at
least 4 hex digits): the plan (blocks, MacroJobs, MicroJobs with the
verifiers once drawn, the price per run), each MicroJob's state (pending,
committed, disclosed, checked, redo) and the processors that ran it, the
MicroJobs by processor, what went wrong, the settlement (tx, payouts,
refund) and the job's events. GET /v1/jobs/{id}/describe gives the same.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, d, err := describeJob(cmd.Context(), g, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), d)
			}
			printDescription(cmd.OutOrStdout(), d)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// describeJob resolves the job ID argument and reads the job's
// description.
func describeJob(ctx context.Context, g *globals, arg string) (*meshclient.Client, apiv1.JobDescription, error) {
	c, err := g.client()
	if err != nil {
		return nil, apiv1.JobDescription{}, err
	}
	id, err := resolveJobID(ctx, c, arg)
	if err != nil {
		return nil, apiv1.JobDescription{}, err
	}
	d, err := c.Describe(ctx, id)
	return c, d, err
}

func printDescription(out io.Writer, d apiv1.JobDescription) {
	j := d.Job
	fmt.Fprintf(out, "job %s\nstate %s\ncreator %s\ndeadline %s\ncode %s\ndata %s\n",
		j.ID, j.State, j.Creator, j.Deadline.Format(time.RFC3339), j.CodeURI, j.DataURI)
	printPlan(out, d.Plan)
	if !d.ChecksDrawn {
		fmt.Fprintln(out, "verifiers: not drawn yet (the creator reveals its check seed once every regular MicroJob is committed)")
	}
	for _, m := range d.MacroJobs {
		fmt.Fprintf(out, "MacroJob %d %s\n", m.Index, m.ID)
		for _, mj := range m.MicroJobs {
			kind := "regular "
			if mj.Verifier {
				kind = "verifier"
			}
			fmt.Fprintf(out, "  MicroJob %s slot %d %s blocks %s  %-9s", shortID(mj.ID), mj.Slot, kind, blockList(mj.Blocks), mj.State)
			if len(mj.Committed) > 0 {
				fmt.Fprintf(out, " committed by %s", strings.Join(mj.Committed, ","))
			}
			if len(mj.Disclosed) > 0 {
				fmt.Fprintf(out, " disclosed by %s", strings.Join(mj.Disclosed, ","))
			}
			fmt.Fprintln(out)
		}
	}
	if d.MicroJobsLeftOut > 0 {
		fmt.Fprintf(out, "(%d more MicroJobs not listed)\n", d.MicroJobsLeftOut)
	}
	if len(d.Processors) > 0 {
		fmt.Fprintln(out, "processors:")
		for _, p := range slices.Sorted(maps.Keys(d.Processors)) {
			var ids []string
			for _, id := range d.Processors[p] {
				ids = append(ids, shortID(id))
			}
			fmt.Fprintf(out, "  %s committed %d: %s\n", p, len(ids), strings.Join(ids, " "))
		}
	}
	if len(d.Errors) > 0 {
		fmt.Fprintln(out, "errors:")
		for _, e := range d.Errors {
			fmt.Fprintf(out, "  %s\n", e)
		}
	}
	printResult(out, j)
	fmt.Fprintln(out, "events:")
	if d.EventsLeftOut > 0 {
		fmt.Fprintf(out, "  (%d older events not listed)\n", d.EventsLeftOut)
	}
	for _, e := range d.Events {
		fmt.Fprintf(out, "  %s\n", eventLine(e))
	}
}

// eventLine is event e on one line: its time, author and what happened.
func eventLine(e apiv1.JobEvent) string {
	return fmt.Sprintf("%s %s %s", e.Time.Format("2006-01-02T15:04:05.000Z07:00"), e.Peer, e.Text)
}

// shortID is a MicroJob's ID shortened for reading.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// blockList writes ascending block indices with runs as ranges: 0-3,7.
func blockList(bs []uint64) string {
	var parts []string
	for i := 0; i < len(bs); {
		j := i
		for j+1 < len(bs) && bs[j+1] == bs[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(bs[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", bs[i], bs[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
