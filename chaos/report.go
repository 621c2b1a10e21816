package chaos

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is a chaos run's outcome.
type Report struct {
	Config Config
	Jobs   []JobReport
	// Violations are the run's broken invariants outside any one job (the
	// escrow's books at the end).
	Violations []string
	// Dropped is the number of pubsub messages the run's loss dropped.
	Dropped float64
	// Restaked counts the slashed processors whose stake was topped up
	// between jobs.
	Restaked int
}

// Faults counts the faults injected by kind: "kill", "bootstrap", "cut",
// "liar" (one per liar and job).
func (r Report) Faults() map[string]int {
	n := map[string]int{}
	for _, j := range r.Jobs {
		if j.Killed {
			n["kill"]++
			if j.Faults.Bootstrap {
				n["bootstrap"]++
			}
		}
		if j.Faults.Cut != [2]int{} {
			n["cut"]++
		}
		n["liar"] += len(j.Faults.Liars)
	}
	return n
}

// AllViolations lists every violation, each prefixed with its job.
func (r Report) AllViolations() []string {
	var out []string
	for _, j := range r.Jobs {
		for _, v := range j.Violations {
			out = append(out, fmt.Sprintf("job %d (%s): %s", j.Index, j.Faults, v))
		}
	}
	return append(out, r.Violations...)
}

// WorstLastBlock is the longest time from a job's last block to its
// verdict, and the job's index (-1 for none).
func (r Report) WorstLastBlock() (time.Duration, int) {
	worst, at := time.Duration(0), -1
	for _, j := range r.Jobs {
		if j.LastBlock > worst {
			worst, at = j.LastBlock, j.Index
		}
	}
	return worst, at
}

// Table is the run as text: one line per job, then the totals against
// the goals.
func (r Report) Table() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "job\tfaults\tculprits\tlies accepted\tsettled in\tlast block → verdict\tviolations")
	for _, j := range r.Jobs {
		culprits := "-"
		if len(j.Culprits) > 0 {
			culprits = strings.Trim(fmt.Sprint(j.Culprits), "[]")
		}
		faults := j.Faults.String()
		if j.Faults.Kill != 0 && !j.Killed {
			faults += " (job over first)"
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%d\t%.1fs\t%.1fs\t%d\n", j.Index, faults, culprits, j.LiesAccepted, j.Elapsed.Seconds(), j.LastBlock.Seconds(), len(j.Violations))
	}
	w.Flush()
	f := r.Faults()
	worst, at := r.WorstLastBlock()
	lies, liedJobs := 0, 0
	for _, j := range r.Jobs {
		lies += j.LiesAccepted
		if j.LiesAccepted > 0 {
			liedJobs++
		}
	}
	goal := 2 * r.Config.ProcessingTimeout
	fmt.Fprintf(&b, "\n%d jobs on %d processors (seed %d); faults: %d kills (%d with the bootstrap), %d cuts, %d liars, %.0f messages dropped (%.0f%% loss)\n",
		len(r.Jobs), r.Config.Processors, r.Config.Seed, f["kill"], f["bootstrap"], f["cut"], f["liar"], r.Dropped, 100*max(r.Config.Drop, 0))
	fmt.Fprintf(&b, "invariant violations: %d (goal 0); lies accepted: %d blocks in %d jobs; stakes topped up after a slash: %d\n", len(r.AllViolations()), lies, liedJobs, r.Restaked)
	fmt.Fprintf(&b, "worst last block → verdict: %.1fs in job %d (goal ≤ %.0fs, twice the processing timeout)\n", worst.Seconds(), at, goal.Seconds())
	for _, v := range r.AllViolations() {
		fmt.Fprintf(&b, "  %s\n", v)
	}
	return b.String()
}
