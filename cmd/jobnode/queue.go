package main

import (
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobmesh/jobmesh/api"
)

// dispatchHeader names the dispatch columns of `jobnode nodes`.
const dispatchHeader = "LIVE\tSTAKE WEI\tQOS\tVRAM SCORE\tTIMEOUT SCORE\tSPEED SCORE\tWEIGHT\tTIMEOUTS\tKICKED\tKICKED AT\tSPEED AT"

// dispatchColumns are a processor's dispatch columns: whether it is live,
// its stake, combined QoS score and its VRAM, timeout and speed parts, its
// selection weight, the timeouts counted in its window (of the window's
// tasks), the kick-out reason and when it took effect, and when its
// latest scored task ended ("-" when it is not live, not kicked, or has no
// scored task).
func dispatchColumns(dn api.DispatchNodes, peerID string) string {
	for _, p := range dn.Processors {
		if p.PeerID == peerID {
			kicked, at := p.Kicked, "-"
			if kicked == "" {
				kicked = "-"
			}
			if p.KickedAt != nil {
				at = p.KickedAt.UTC().Format(time.RFC3339)
			}
			speedAt := "-"
			if p.SpeedAt != nil {
				speedAt = p.SpeedAt.UTC().Format(time.RFC3339)
			}
			return fmt.Sprintf("yes\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.4f\t%d/%d\t%s\t%s\t%s",
				p.StakeWei, p.QoS, p.VRAMScore, p.TimeoutScore, p.SpeedScore, p.Weight, p.Timeouts, dn.TimeoutWindow, kicked, at, speedAt)
		}
	}
	return "no\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-"
}

func newQueueCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "List the open jobs in their dispatch groups, best task value first",
		Long: `List the open jobs (no verdict, not aborted) in their dispatch groups: by
minimum VRAM and required GPU model ("Any" when none). Within a group jobs are
ordered by task value, price over estimated time (wei per second); a job with
replicas is in a group of its own. The cap is the most processor slots the
not-started jobs may wait for, a job counting once per replica, before the
mesh aborts the lowest-value one.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			q, err := c.Queue(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), q)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d live processors, cap %d queued processor slots\n", q.Live, q.Cap)
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "GROUP\tJOB\tPRICE WEI\tVALUE WEI/S\tEST S\tSTARTED")
			for _, gr := range q.Groups {
				for _, j := range gr.Jobs {
					value := j.Value
					if value == "" {
						value = "-"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\n", gr.Label, j.ID, j.PriceWei, value, strconv.FormatFloat(j.EstimatedSeconds, 'f', -1, 64), j.Started)
				}
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
