package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/jobmesh/jobmesh/chaos"
)

func newChaosCmd() *cobra.Command {
	var (
		cfg      = chaos.DefaultConfig()
		logLevel string
	)
	cmd := &cobra.Command{
		Use:   "chaos",
		Short: "Run many short jobs on an in-process mesh while injecting faults, and check the invariants",
		Long: `Start a mesh of processors, a client and an embedded chain on a mock network,
and run short jobs one after another while, drawn from a seed, processors are
killed (the bootstrap node with them), links between processors are cut,
every node drops a share of the messages it receives, and processors lie
(byzantine: one identical wrong output for every block; rational: lies where
cheapest). After each job it checks: one verdict, every block processed, no
honest processor named a culprit, value conserved on chain, the output
fetchable. It prints one line per job and the totals, and exits 1 on any
violation. A rate of 0 keeps its default; a negative rate turns a fault off.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if logLevel != "" {
				var level slog.Level
				if err := level.UnmarshalText([]byte(logLevel)); err != nil {
					return fmt.Errorf("--log: %w", err)
				}
				cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
			}
			out := cmd.OutOrStdout()
			cfg.Progress = func(j chaos.JobReport) {
				fmt.Fprintf(out, "job %d: %s; settled %v in %.1fs, culprits %v, lies accepted %d, violations %d\n",
					j.Index, j.Faults, j.Settled, j.Elapsed.Seconds(), j.Culprits, j.LiesAccepted, len(j.Violations))
				for _, v := range j.Violations {
					fmt.Fprintf(out, "  %s\n", v)
				}
			}
			rep, err := chaos.Run(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			fmt.Fprint(out, "\n"+rep.Table())
			if n := len(rep.AllViolations()); n > 0 {
				return fmt.Errorf("%d invariant violations", n)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of every fault draw")
	f.IntVar(&cfg.Jobs, "jobs", cfg.Jobs, "jobs to run, one after another")
	f.IntVar(&cfg.From, "from", 0, "start at this job of the seed's draws (repeats one job's faults)")
	f.IntVar(&cfg.Processors, "processors", cfg.Processors, "processors of the mesh")
	f.IntVar(&cfg.MaxLiars, "max-liars", cfg.MaxLiars, "most liars in one job (at most a quarter of the processors)")
	f.Float64Var(&cfg.KillRate, "kill-rate", cfg.KillRate, "probability that a job has a processor killed (negative: never)")
	f.Float64Var(&cfg.BootstrapRate, "bootstrap-rate", cfg.BootstrapRate, "probability that a kill takes the bootstrap node too")
	f.Float64Var(&cfg.CutRate, "cut-rate", cfg.CutRate, "probability that a job has a link cut (negative: never)")
	f.Float64Var(&cfg.LiarRate, "liar-rate", cfg.LiarRate, "probability that a job has liars (negative: never)")
	f.Float64Var(&cfg.Drop, "drop", cfg.Drop, "share of inbound pubsub messages every node drops")
	f.DurationVar(&cfg.JobTimeout, "job-timeout", cfg.JobTimeout, "longest a job may take to settle")
	f.StringVar(&logLevel, "log", "", "print the mesh's logs from this level (debug, info, warn, error)")
	return cmd
}
