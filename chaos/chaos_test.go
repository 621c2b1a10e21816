package chaos

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/microjob"
)

// TestDrawCoversEveryKind: the draw is a function of the seed; job j has
// fault kind j mod 3 whatever the rates; the processors it names are
// distinct and in 1..P; a negative rate turns a kind off.
func TestDrawCoversEveryKind(t *testing.T) {
	c := DefaultConfig()
	c.KillRate, c.CutRate, c.LiarRate = 0.01, 0.01, 0.01
	a, b := rand.New(rand.NewPCG(5, 0)), rand.New(rand.NewPCG(5, 0))
	for j := range 60 {
		f, g := Draw(a, c, j), Draw(b, c, j)
		if f.String() != g.String() {
			t.Fatalf("job %d: %s and %s from one seed", j, f, g)
		}
		switch {
		case j%3 == 0 && f.Kill == 0, j%3 == 1 && f.Cut == [2]int{}, j%3 == 2 && len(f.Liars) == 0:
			t.Fatalf("job %d lacks its kind: %s", j, f)
		}
		named := slices.Concat(f.Liars, f.Cut[:])
		if f.Kill != 0 {
			named = append(named, f.Kill)
		}
		seen := map[int]bool{}
		for _, p := range named {
			if p == 0 && f.Cut == [2]int{} {
				continue
			}
			if p < 1 || p > c.Processors || seen[p] {
				t.Fatalf("job %d names processor %d twice or out of range: %s", j, p, f)
			}
			seen[p] = true
		}
		if len(f.Liars) > c.MaxLiars {
			t.Fatalf("job %d: %d liars, at most %d", j, len(f.Liars), c.MaxLiars)
		}
	}
	c.KillRate, c.CutRate, c.LiarRate = -1, -1, -1
	for j := range 30 {
		if f := Draw(a, c, j); f.Count() != 0 {
			t.Fatalf("job %d has faults with every kind off: %s", j, f)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*Config){
		"no jobs":             func(c *Config) { c.Jobs = -1 },
		"too many liars":      func(c *Config) { c.MaxLiars = 3 },
		"too few processors":  func(c *Config) { c.Processors = 5 },
		"rate above 1":        func(c *Config) { c.CutRate = 1.5 },
		"loss too high":       func(c *Config) { c.Drop = 0.6 },
		"processing too fast": func(c *Config) { c.ProcessingTimeout = time.Millisecond },
		"picture too big":     func(c *Config) { c.Columns, c.Rows = 20, 20 },
	} {
		c := DefaultConfig()
		mod(&c)
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestInvariantsCatch: the checks that need no mesh fail where they
// must: a verdict that is not verified or misses a MicroJob, and a
// culprit that is not a liar.
func TestInvariantsCatch(t *testing.T) {
	if err := noHonestCulprit([]int{2}, Faults{Liars: []int{2, 5}}); err != nil {
		t.Fatal(err)
	}
	for _, culprits := range [][]int{{3}, {2, 3}, {-1}} {
		if err := noHonestCulprit(culprits, Faults{Liars: []int{2, 5}}); err == nil {
			t.Fatalf("culprits %v, liars [2 5]: no violation", culprits)
		}
	}
	if err := everyBlock(nil, dapp.Result{Verdict: microjob.Verdict{Complete: true}}); err == nil {
		t.Fatal("an unverified verdict passes")
	}
}

// TestShortRun is the seeded chaos run CI keeps: three jobs on eight
// processors, one with an honest processor killed (the bootstrap node
// with it, by the seed), one with a link cut, one with liars, 2% of the
// messages dropped throughout; every invariant holds after every job.
// JOBMESH_CHAOS_JOBS runs more jobs, JOBMESH_CHAOS_SEED another seed;
// `jobnode chaos` is the long run.
func TestShortRun(t *testing.T) {
	if testing.Short() {
		t.Skip("a live mesh")
	}
	c := Config{Seed: 7, Jobs: 3, KillWithin: 3 * time.Second, Dir: t.TempDir()}
	if s := os.Getenv("JOBMESH_CHAOS_JOBS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("JOBMESH_CHAOS_JOBS=%q", s)
		}
		c.Jobs = n
	}
	if s := os.Getenv("JOBMESH_CHAOS_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("JOBMESH_CHAOS_SEED=%q", s)
		}
		c.Seed = n
	}
	logger, printTail := meshtest.TestLogger(t)
	defer printTail()
	c.Logger = logger
	c.Progress = func(j JobReport) {
		t.Logf("job %d: %s; settled %v in %.1fs, last block → verdict %.1fs, culprits %v",
			j.Index, j.Faults, j.Settled, j.Elapsed.Seconds(), j.LastBlock.Seconds(), j.Culprits)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(c.Jobs)*4*time.Minute)
	defer cancel()
	rep, err := Run(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + rep.Table())
	if v := rep.AllViolations(); len(v) > 0 {
		t.Fatalf("%d invariant violations", len(v))
	}
	f := rep.Faults()
	if f["kill"] == 0 || f["cut"] == 0 || f["liar"] == 0 || rep.Dropped == 0 {
		t.Fatalf("faults injected %v, %v messages dropped: a kind is missing", f, rep.Dropped)
	}
}
