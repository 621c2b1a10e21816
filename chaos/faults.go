package chaos

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Liar kinds.
const (
	// Byzantine liars give one identical wrong output for every block
	// they run, verifiers and re-runs included: a colluding coalition.
	Byzantine = "byzantine"
	// Rational liars lie where a lie is cheapest to hide
	// (localmesh.RationalLiar), never in a check.
	Rational = "rational"
)

// Faults are what one job suffers. Processors are numbered 1..P, as the
// mesh's members are; 0 is the bootstrap node.
type Faults struct {
	// Kill is the honest processor stopped KillAfter after the job's
	// submission, until the job is over; 0 for none.
	Kill      int
	KillAfter time.Duration
	// Bootstrap: the bootstrap node is stopped with Kill.
	Bootstrap bool
	// Cut is the pair of processors whose link is cut for the whole job;
	// zero for none.
	Cut [2]int
	// Liars lie in this job, of the kind LiarKind.
	Liars    []int
	LiarKind string
}

// Count is the number of faults injected: a kill, the bootstrap's, a
// cut, one per liar.
func (f Faults) Count() int {
	n := len(f.Liars)
	if f.Kill != 0 {
		n++
	}
	if f.Bootstrap {
		n++
	}
	if f.Cut != [2]int{} {
		n++
	}
	return n
}

// String is a short human summary, such as "kill 3 at 2.1s, cut 1–6,
// byzantine 2 5".
func (f Faults) String() string {
	var parts []string
	if f.Kill != 0 {
		s := fmt.Sprintf("kill %d at %.1fs", f.Kill, f.KillAfter.Seconds())
		if f.Bootstrap {
			s += " with the bootstrap"
		}
		parts = append(parts, s)
	}
	if f.Cut != [2]int{} {
		parts = append(parts, fmt.Sprintf("cut %d–%d", f.Cut[0], f.Cut[1]))
	}
	if len(f.Liars) > 0 {
		parts = append(parts, fmt.Sprintf("%s %s", f.LiarKind, strings.Trim(fmt.Sprint(f.Liars), "[]")))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Draw draws job j's faults from rng: each kind by its rate, and job j
// surely has the kind j mod 3 (0: a kill, 1: a cut, 2: liars) when its
// rate is not off, so that a short run covers every kind. The liars,
// the killed processor and the cut's ends are distinct.
func Draw(rng *rand.Rand, c Config, j int) Faults {
	var f Faults
	free := rng.Perm(c.Processors) // a shuffled 0..P-1; processor i+1
	take := func() int {
		p := free[0] + 1
		free = free[1:]
		return p
	}
	surely := func(kind int, rate float64) bool {
		u := rng.Float64()
		return rate >= 0 && (j%3 == kind || on(rate, u))
	}
	if surely(2, c.LiarRate) && c.MaxLiars > 0 {
		n := 1 + rng.IntN(c.MaxLiars)
		for range n {
			f.Liars = append(f.Liars, take())
		}
		slices.Sort(f.Liars)
		f.LiarKind = Byzantine
		if rng.IntN(3) == 0 {
			f.LiarKind = Rational
		}
	}
	if surely(0, c.KillRate) {
		f.Kill = take()
		f.KillAfter = time.Duration(rng.Int64N(int64(c.KillWithin)))
		f.Bootstrap = on(c.BootstrapRate, rng.Float64())
	}
	if surely(1, c.CutRate) {
		f.Cut = [2]int{take(), take()}
		slices.Sort(f.Cut[:])
	}
	return f
}
