package checksim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/jobmesh/jobmesh/jobs"
)

// Adversary is the strategy of the processors it controls: processors
// 0..Members()-1 of a run. Processor 0 is the liar: only its regular
// MicroJobs are the adversary's to decide (Regular); the other members run
// theirs honestly. A member that runs a verifier MicroJob decides its
// outputs with Verifier; one that re-runs a self-checked block repeats the
// coalition's lie on it, if any. A lie is a wrong output hash; the
// coalition's lies on one block are alike, so members can repeat them.
type Adversary interface {
	// Name names the strategy in a report.
	Name() string
	// Members is the number of processors the adversary controls.
	Members() int
	// Validate reports a parameter out of its range.
	Validate() error
	// Regular decides the output of regular MicroJob mu, taken by the liar.
	Regular(j *Job, mu *jobs.MicroJob) Move
	// Verifier says which positions of verifier ver, run by a member, get a
	// wrong output.
	Verifier(j *Job, ver *jobs.MicroJob) []bool
	// Steers reports whether the liar commits last and tries
	// Config.Salts salts on its last commitment to steer a lapse seed
	// away from its lies.
	Steers() bool
}

var (
	_ Adversary = Naive{}
	_ Adversary = Falsifier{}
	_ Adversary = Rational{}
	_ Adversary = Copier{}
	_ Adversary = Colluding{}
	_ Adversary = Grinder{}
)

// Move is the liar's output for one regular MicroJob.
type Move struct {
	// Lies holds, by block position, whether the output is wrong; nil is an
	// honest run.
	Lies []bool
	// Copy: the liar runs nothing. It commits the commitment an honest
	// processor made for the same MicroJob (the commit-reveal order hides
	// that processor's hashes until the disclosures), and then discloses a
	// guess with its own wallet.
	Copy bool
}

// Job is what an adversary knows of a job while it computes and commits.
type Job struct {
	Plan *jobs.Plan // the public plan
	// Known is the checked plan when its seed is known before anyone
	// commits (the public-seed baseline), else nil.
	Known *jobs.Plan
	Rand  *rand.Rand // the adversary's draws, seeded
	lied  map[uint64]bool
}

// Lied reports whether the coalition disclosed a wrong output for block
// in a regular MicroJob so far.
func (j *Job) Lied(block uint64) bool { return j.lied[block] }

// checkedPositions lists the positions of regular MicroJob mu that the
// Known plan checks; nil without a Known plan.
func (j *Job) checkedPositions(mu *jobs.MicroJob) []int {
	if j.Known == nil {
		return nil
	}
	var out []int
	ver := j.Known.Macros[mu.Macro].Verifier()
	for _, src := range ver.Sources {
		if src.Slot == mu.Slot {
			out = append(out, src.Position)
		}
	}
	return out
}

// repeatLies is the verifier of a coalition that repeats its own lies,
// so that no verifier block of its runs disputes them, and is honest
// elsewhere.
func repeatLies(j *Job, ver *jobs.MicroJob) []bool {
	out := make([]bool, len(ver.Blocks))
	for i, b := range ver.Blocks {
		out[i] = j.Lied(b)
	}
	return out
}

// all returns n true values.
func all(n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = true
	}
	return out
}

// Naive lies on each block it runs with probability Q, verifier blocks
// included, without regard to the checks.
type Naive struct {
	Q float64 // probability of a wrong output per block; 0.1 in ByName
}

func (a Naive) Name() string { return fmt.Sprintf("naive q=%g", a.Q) }
func (a Naive) Members() int { return 1 }
func (a Naive) Steers() bool { return false }
func (a Naive) Validate() error {
	if a.Q < 0 || a.Q > 1 {
		return fmt.Errorf("q %g not in 0..1", a.Q)
	}
	return nil
}
func (a Naive) Regular(j *Job, mu *jobs.MicroJob) Move {
	return Move{Lies: a.draw(j, len(mu.Blocks))}
}
func (a Naive) Verifier(j *Job, ver *jobs.MicroJob) []bool { return a.draw(j, len(ver.Blocks)) }

func (a Naive) draw(j *Job, n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = j.Rand.Float64() < a.Q
	}
	return out
}

// Falsifier returns a wrong output for every block it runs.
type Falsifier struct{}

func (Falsifier) Name() string                               { return "falsifier" }
func (Falsifier) Members() int                               { return 1 }
func (Falsifier) Steers() bool                               { return false }
func (Falsifier) Validate() error                            { return nil }
func (Falsifier) Regular(_ *Job, mu *jobs.MicroJob) Move     { return Move{Lies: all(len(mu.Blocks))} }
func (Falsifier) Verifier(_ *Job, ver *jobs.MicroJob) []bool { return all(len(ver.Blocks)) }

// Rational knows the protocol but not the check seed: it falsifies
// exactly one block of each MicroJob, the cheapest lie. Where the checks
// are known before it commits (the public-seed baseline) it lies on a
// block that is not checked. It runs verifiers honestly but for the
// blocks it lied on.
type Rational struct{}

func (Rational) Name() string    { return "rational" }
func (Rational) Members() int    { return 1 }
func (Rational) Steers() bool    { return false }
func (Rational) Validate() error { return nil }
func (Rational) Regular(j *Job, mu *jobs.MicroJob) Move {
	lies := make([]bool, len(mu.Blocks))
	if j.Known == nil {
		lies[j.Rand.IntN(len(lies))] = true
		return Move{Lies: lies}
	}
	checked := j.checkedPositions(mu)
	var free []int
	for i := range lies {
		if !slices.Contains(checked, i) {
			free = append(free, i)
		}
	}
	if len(free) > 0 {
		lies[free[j.Rand.IntN(len(free))]] = true
	}
	return Move{Lies: lies}
}
func (Rational) Verifier(j *Job, ver *jobs.MicroJob) []bool { return repeatLies(j, ver) }

// Copier runs nothing: it copies the commitment of a processor that ran
// the MicroJob and discloses a guess. Given a verifier, it guesses every
// block.
type Copier struct{}

func (Copier) Name() string                               { return "copier" }
func (Copier) Members() int                               { return 1 }
func (Copier) Steers() bool                               { return false }
func (Copier) Validate() error                            { return nil }
func (Copier) Regular(*Job, *jobs.MicroJob) Move          { return Move{Copy: true} }
func (Copier) Verifier(_ *Job, ver *jobs.MicroJob) []bool { return all(len(ver.Blocks)) }

// Colluding is a rational liar and Size-1 partners, honest in their own
// MicroJobs, that repeat the liar's wrong hashes when one of them runs a
// verifier or re-runs a self-checked block.
type Colluding struct {
	Size int // processors in the coalition, the liar included; 2 in ByName
}

func (a Colluding) Name() string    { return fmt.Sprintf("colluding %d", a.Size) }
func (a Colluding) Members() int    { return a.Size }
func (a Colluding) Steers() bool    { return false }
func (a Colluding) Validate() error { return nil }
func (a Colluding) Regular(j *Job, mu *jobs.MicroJob) Move {
	return Rational{}.Regular(j, mu)
}
func (a Colluding) Verifier(j *Job, ver *jobs.MicroJob) []bool { return repeatLies(j, ver) }

// Grinder is a rational liar that commits last and, where the checks
// come from the lapse seed of the commitments, tries salts on its last
// commitment until none of its lies is checked. Under a revealed seed it
// cannot steer anything: the seed is the DApp's.
type Grinder struct{}

func (Grinder) Name() string                               { return "grinder" }
func (Grinder) Members() int                               { return 1 }
func (Grinder) Steers() bool                               { return true }
func (Grinder) Validate() error                            { return nil }
func (Grinder) Regular(j *Job, mu *jobs.MicroJob) Move     { return Rational{}.Regular(j, mu) }
func (Grinder) Verifier(j *Job, ver *jobs.MicroJob) []bool { return repeatLies(j, ver) }

// Names lists the adversaries ByName knows.
var Names = []string{"naive", "falsifier", "rational", "copier", "colluding", "grinder"}

// ByName returns the adversary called name, with q the naive liar's lie
// probability and size the colluding coalition's.
func ByName(name string, q float64, size int) (Adversary, error) {
	switch name {
	case "naive":
		return Naive{Q: q}, nil
	case "falsifier":
		return Falsifier{}, nil
	case "rational":
		return Rational{}, nil
	case "copier":
		return Copier{}, nil
	case "colluding":
		return Colluding{Size: size}, nil
	case "grinder":
		return Grinder{}, nil
	}
	return nil, fmt.Errorf("%w: adversary %q: want one of %s", ErrConfig, name, strings.Join(Names, ", "))
}
