package checksim

import (
	"fmt"
	"math"
	"strings"
	"text/tabwriter"
)

// Report is the outcome of one or more runs, a Row each.
type Report struct {
	Rows []Row
}

// Row is the outcome of one Run.
type Row struct {
	Adversary  string // Adversary.Name
	Checks     string // where the check seed came from: "reveal", "lapse" or "public"
	Members    int    // processors in the coalition
	Processors int    // P
	K          uint32 // blocks per regular MicroJob
	Jobs       int    // jobs simulated
	// Micro counts the regular MicroJobs the liar lied in (or copied), and
	// those of them the verdict or a self-check named it for.
	Micro Rate
	// Job counts the jobs in which a member lied, and those in which one
	// was named.
	Job Rate
	// RegularBlocks are the blocks of the jobs; ExtraBlocks the block runs
	// the checks added: verifier blocks and self-check re-runs.
	RegularBlocks, ExtraBlocks uint64
	// HonestNamed counts the jobs in which a self-check named a processor
	// outside the coalition: colluding re-runners that repeat the lie won
	// the vote by the margin (finish.CheckOutcome; Framing gives its odds).
	HonestNamed int
	// Bound is the collusion bound (1 − f)·K'/(N·K) on Micro for a liar
	// that falsifies one block per MicroJob under a seed it cannot know or
	// steer, with f = Members/Processors, while a verifier runner that ran
	// none of the checked MicroJobs is left (package doc); 0 where it does
	// not apply.
	Bound float64
}

// Redundancy is the price of the checks: extra block runs per regular
// block.
func (r Row) Redundancy() float64 {
	if r.RegularBlocks == 0 {
		return 0
	}
	return float64(r.ExtraBlocks) / float64(r.RegularBlocks)
}

// bound is cfg's Row.Bound.
func bound(cfg Config) float64 {
	switch cfg.Adversary.(type) {
	case Rational, Colluding, Grinder:
	default:
		return 0
	}
	if cfg.Public || cfg.Lapse && cfg.Adversary.Steers() {
		return 0
	}
	f := float64(cfg.Adversary.Members()) / float64(cfg.Processors)
	return (1 - f) * float64(cfg.KVerifier) / float64(cfg.N) / float64(cfg.K)
}

// Rate is a count of successes (Caught) out of trials (Of).
type Rate struct {
	Caught, Of int
}

// P is the observed rate, 0 without trials.
func (r Rate) P() float64 {
	if r.Of == 0 {
		return 0
	}
	return float64(r.Caught) / float64(r.Of)
}

// z95 is the standard normal quantile of a two-sided 95% interval.
const z95 = 1.959963984540054

// Wilson is the 95% Wilson score interval of the rate; [0, 1] without
// trials. Unlike the normal approximation it stays inside [0, 1] and is
// sound at rates of 0 and 1.
func (r Rate) Wilson() (lo, hi float64) { return r.WilsonZ(z95) }

// WilsonZ is the Wilson score interval of the rate for z standard
// deviations (1.96: 95%, 3.29: 99.9%).
func (r Rate) WilsonZ(z float64) (lo, hi float64) {
	if r.Of == 0 {
		return 0, 1
	}
	n, p := float64(r.Of), r.P()
	z2 := z * z
	center := (p + z2/(2*n)) / (1 + z2/n)
	half := z / (1 + z2/n) * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	return max(0, center-half), min(1, center+half)
}

func (r Rate) String() string {
	lo, hi := r.Wilson()
	return fmt.Sprintf("%.4f [%.4f, %.4f]", r.P(), lo, hi)
}

// Table is the report as an aligned text table, one line a row.
func (rep Report) Table() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ADVERSARY\tCHECKS\tf\tJOBS\tLIED MICROJOBS\tCAUGHT/MICROJOB [95% CI]\tBOUND\tLIED JOBS\tCAUGHT/JOB [95% CI]\tHONEST NAMED\tREDUNDANCY")
	for _, r := range rep.Rows {
		bound := "-"
		if r.Bound > 0 {
			bound = fmt.Sprintf("%.4f", r.Bound)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d\t%d\t%s\t%s\t%d\t%s\t%d\t%.4f\n",
			r.Adversary, r.Checks, r.Members, r.Processors, r.Jobs, r.Micro.Of, r.Micro, bound, r.Job.Of, r.Job, r.HonestNamed, r.Redundancy())
	}
	tw.Flush()
	return b.String()
}
