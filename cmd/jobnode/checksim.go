package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jobmesh/jobmesh/checksim"
	"github.com/jobmesh/jobmesh/finish"
)

func newCheckSimCmd() *cobra.Command {
	var (
		cfg       = checksim.DefaultConfig()
		adversary string
		q         float64
		colluders int
		framing   bool
		frame     = checksim.DefaultFramingConfig()
	)
	cmd := &cobra.Command{
		Use:   "checksim",
		Short: "Measure how often the hidden checks catch lying processors, in simulated jobs",
		Long: `Run the real slicing and judging code over many seeded jobs in memory
against an adversary, and print how often its lies are caught per MicroJob and
per job (with 95% Wilson intervals) and the redundancy the checks cost: extra
block runs per regular block. With --adversary all (the default) it runs every
adversary: naive, falsifier, rational (under a public seed, a revealed seed and
a lapse seed), copier, colluding coalitions of P/8 and P/4 processors, and
grinder (revealed and lapse seed). Adversaries: ` + strings.Join(checksim.Names, ", ") + `.

With --framing it prints instead, for meshes of 8 to 400 processors of which
1/8 to 1/2 collude on one wrong hash, the exact probability that an honest
processor is framed (named a culprit) in a dispute, in a self-check, per
MacroJob and per job, and how often a dispute ends undecided.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var (
				rep checksim.Report
				err error
			)
			switch {
			case framing:
				if !cmd.Flags().Changed("margin") && !cmd.Flags().Changed("max-reruns") {
					frame.Escalation = finish.Escalation{} // the protocol's rule for --macrojobs
				}
				reps, err := checksim.FramingGrid(frame, checksim.FramingSizes, checksim.FramingShares)
				if err != nil {
					return err
				}
				fmt.Fprint(cmd.OutOrStdout(), checksim.FramingTable(reps))
				return nil
			case adversary == "all" && (cfg.Lapse || cfg.Public):
				return fmt.Errorf("--lapse and --public need one --adversary: all runs each seed source it needs")
			case adversary == "all":
				rep, err = checksim.Suite(cfg)
			default:
				if cfg.Adversary, err = checksim.ByName(adversary, q, colluders); err != nil {
					return err
				}
				rep, err = checksim.Run(cfg)
			}
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), rep.Table())
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Jobs, "jobs", cfg.Jobs, "jobs to simulate per adversary")
	f.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of every draw")
	f.IntVar(&cfg.Processors, "processors", cfg.Processors, "simulated processors (P)")
	f.Uint32Var(&cfg.N, "n", cfg.N, "regular MicroJobs per MacroJob (N)")
	f.Uint32Var(&cfg.K, "k", cfg.K, "blocks per regular MicroJob (K)")
	f.Uint32Var(&cfg.KVerifier, "verifier-blocks", 0, "blocks per verifier MicroJob (K'); 0: min(K, N)")
	f.Uint64Var(&cfg.Blocks, "blocks", 0, "blocks per job; 0: N·K")
	f.StringVar(&adversary, "adversary", "all", "adversary to run, or all")
	f.BoolVar(&cfg.Lapse, "lapse", false, "the DApp stays silent: checks come from the lapse seed (one adversary only)")
	f.BoolVar(&cfg.Public, "public", false, "baseline: checks drawn from the public seed commitment (one adversary only)")
	f.IntVar(&cfg.Salts, "salts", cfg.Salts, "salts the grinder tries on its last commitment")
	f.Float64Var(&q, "q", 0.1, "naive liar's probability of a wrong output per block")
	f.IntVar(&colluders, "colluders", 2, "processors in the colluding coalition, the liar included")
	f.BoolVar(&framing, "framing", false, "print the odds that colluders frame an honest processor, over mesh sizes and colluding shares")
	f.IntVar(&frame.MacroJobs, "macrojobs", frame.MacroJobs, "MacroJobs per job (--framing)")
	f.IntVar(&frame.Escalation.Margin, "margin", frame.Escalation.Margin, "dispute margin (--framing)")
	f.IntVar(&frame.Escalation.MaxReruns, "max-reruns", frame.Escalation.MaxReruns, "most re-runners a dispute asks (--framing)")
	return cmd
}
