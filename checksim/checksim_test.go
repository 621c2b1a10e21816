package checksim

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// runOne is Run with its single row, failing t on an error.
func runOne(t *testing.T, cfg Config) Row {
	t.Helper()
	rep, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rep.Rows))
	}
	r := rep.Rows[0]
	t.Logf("%s %s: MicroJob %v of %d, job %v of %d, redundancy %.4f", r.Adversary, r.Checks, r.Micro, r.Micro.Of, r.Job, r.Job.Of, r.Redundancy())
	return r
}

// within fails t unless want lies in rate's 99.9% interval.
func within(t *testing.T, what string, rate Rate, want float64) {
	t.Helper()
	// A 99.9% interval: the tests assert many rates, each from one seed,
	// so that a 95% one would fail one in twenty by chance alone.
	if lo, hi := rate.WilsonZ(3.29); want < lo || want > hi {
		t.Errorf("%s: %v, want %.4f inside its 99.9%% interval", what, rate, want)
	}
}

// atLeast fails t unless rate has at least n trials.
func atLeast(t *testing.T, what string, rate Rate, n int) {
	t.Helper()
	if rate.Of < n {
		t.Fatalf("%s: %d trials, want at least %d", what, rate.Of, n)
	}
}

func TestFalsifierCaughtPerJob(t *testing.T) {
	r := runOne(t, Config{Seed: 11, Adversary: Falsifier{}})
	atLeast(t, "falsifier jobs", r.Job, 1000)
	if p := r.Job.P(); p < 0.999 {
		t.Errorf("falsifier caught in %v of jobs, want at least 0.999", r.Job)
	}
	if r.Micro.Caught != r.Micro.Of {
		t.Errorf("falsifier caught in %v of its MicroJobs, want every one: every regular MicroJob is checked", r.Micro)
	}
}

func TestRationalCaughtOncePerK(t *testing.T) {
	r := runOne(t, Config{Seed: 12})
	atLeast(t, "rational MicroJobs", r.Micro, 2000)
	within(t, "rational liar per MicroJob", r.Micro, 1/float64(r.K))
}

func TestNaiveCaughtAsItsLiesAreChecked(t *testing.T) {
	r := runOne(t, Config{Seed: 13, Adversary: Naive{Q: 0.1}})
	atLeast(t, "naive MicroJobs", r.Micro, 1000)
	// A MicroJob of K blocks with at least one lie has its one checked
	// block wrong with probability q / (1 − (1−q)^K).
	within(t, "naive liar per MicroJob", r.Micro, 0.1/(1-0.3486784401))
}

func TestCopierAlwaysCaught(t *testing.T) {
	r := runOne(t, Config{Seed: 14, Adversary: Copier{}})
	atLeast(t, "copied MicroJobs", r.Micro, 2000)
	if r.Micro.Caught != r.Micro.Of || r.Job.Caught != r.Job.Of {
		t.Errorf("copier caught in %v of its MicroJobs and %v of jobs, want every one", r.Micro, r.Job)
	}
}

func TestPublicSeedBaselineNeverCatches(t *testing.T) {
	r := runOne(t, Config{Seed: 15, Public: true})
	atLeast(t, "rational MicroJobs", r.Micro, 2000)
	if r.Micro.Caught != 0 || r.Job.Caught != 0 {
		t.Errorf("a public check seed caught the rational liar in %v of MicroJobs and %v of jobs, want none", r.Micro, r.Job)
	}
}

func TestGrinderSteersOnlyTheLapseSeed(t *testing.T) {
	rational := runOne(t, Config{Seed: 16})
	reveal := runOne(t, Config{Seed: 16, Adversary: Grinder{}})
	within(t, "grinder under a revealed seed", reveal.Micro, rational.Micro.P())
	within(t, "rational liar", rational.Micro, reveal.Micro.P())
	within(t, "grinder under a revealed seed", reveal.Micro, 1/float64(reveal.K))

	lapse := runOne(t, Config{Seed: 16, Adversary: Grinder{}, Lapse: true})
	atLeast(t, "grinder MicroJobs", lapse.Micro, 2000)
	if lapse.Micro.P() > 0.001 {
		t.Errorf("grinder under a lapse seed caught in %v of MicroJobs, want about never", lapse.Micro)
	}
	// Without grinding the lapse seed checks like a revealed one.
	within(t, "rational liar under a lapse seed", runOne(t, Config{Seed: 16, Lapse: true}).Micro, 1/float64(lapse.K))
}

func TestCollusionBound(t *testing.T) {
	for _, size := range []int{1, 2} { // f = 1/8, 1/4 of 8 processors
		r := runOne(t, Config{Seed: 17, Adversary: Colluding{Size: size}})
		atLeast(t, "colluding MicroJobs", r.Micro, 2000)
		if _, hi := r.Micro.Wilson(); hi < r.Bound {
			t.Errorf("coalition of %d: caught in %v of MicroJobs, below the bound %.4f", size, r.Micro, r.Bound)
		}
	}
	// A coalition of most processors mostly verifies itself: caught far
	// less often than a lone liar, and still no less than its bound.
	r := runOne(t, Config{Seed: 17, Adversary: Colluding{Size: 6}})
	if _, hi := r.Micro.Wilson(); hi > 0.06 || hi < r.Bound {
		t.Errorf("coalition of 6 of 8: caught in %v of MicroJobs, want under 0.06 and at least %.4f", r.Micro, r.Bound)
	}
}

func TestSelfCheckedLiesCaught(t *testing.T) {
	// With 4 processors and 10 regular MicroJobs a MacroJob, the verifier
	// runner nearly always ran a checked MicroJob itself: its own blocks
	// are self-checked, re-run by the three others, whose 3 votes to 1
	// decide (finish.Escalation: a lead of one would name nobody, so 3
	// processors could not).
	r := runOne(t, Config{Seed: 18, Jobs: 300, Processors: 4, Adversary: Falsifier{}})
	if r.Job.Caught != r.Job.Of || r.Micro.Caught != r.Micro.Of {
		t.Errorf("falsifier among 4: caught in %v of MicroJobs and %v of jobs, want every one", r.Micro, r.Job)
	}
	if verifier := r.RegularBlocks / 10; r.ExtraBlocks <= verifier {
		t.Errorf("%d extra block runs, want more than the %d verifier blocks: self-checks re-run blocks", r.ExtraBlocks, verifier)
	}
}

func TestRedundancy(t *testing.T) {
	for _, a := range []Adversary{Rational{}, Copier{}, Naive{Q: 0.1}} {
		r := runOne(t, Config{Seed: 19, Jobs: 500, Adversary: a})
		// K' = 10 verifier blocks per MacroJob of N·K = 100 blocks, and a
		// few self-check re-runs.
		if got := r.Redundancy(); got < 0.1 || got > 0.15 {
			t.Errorf("%s: redundancy %.4f, want 0.10..0.15", r.Adversary, got)
		}
	}
}

func TestRunIsSeeded(t *testing.T) {
	a := runOne(t, Config{Seed: 20, Jobs: 100, Adversary: Naive{Q: 0.2}})
	b := runOne(t, Config{Seed: 20, Jobs: 100, Adversary: Naive{Q: 0.2}})
	c := runOne(t, Config{Seed: 21, Jobs: 100, Adversary: Naive{Q: 0.2}})
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, different rows: %+v, %+v", a, b)
	}
	if reflect.DeepEqual(a, c) {
		t.Errorf("different seeds, same row: %+v", a)
	}
}

func TestValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	bad := map[string]func(*Config){
		"jobs":        func(c *Config) { c.Jobs = -1 },
		"K' above N":  func(c *Config) { c.KVerifier = c.N + 1 },
		"K":           func(c *Config) { c.K = 1001 },
		"blocks":      func(c *Config) { c.Blocks = 1 << 23 },
		"both seeds":  func(c *Config) { c.Lapse, c.Public = true, true },
		"salts":       func(c *Config) { c.Salts = -1 },
		"q":           func(c *Config) { c.Adversary = Naive{Q: 1.5} },
		"coalition":   func(c *Config) { c.Adversary = Colluding{Size: 7} },
		"no members":  func(c *Config) { c.Adversary = Colluding{} },
		"1 processor": func(c *Config) { c.Processors = 1 },
	}
	for name, f := range bad {
		c := DefaultConfig()
		f(&c)
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
		if _, err := Run(c); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: Run: %v, want ErrConfig", name, err)
		}
	}
	if _, err := ByName("oracle", 0.1, 2); !errors.Is(err, ErrConfig) {
		t.Errorf("unknown adversary: %v, want ErrConfig", err)
	}
	for _, n := range Names {
		if _, err := ByName(n, 0.1, 2); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
}

func TestWilson(t *testing.T) {
	for _, c := range []struct {
		r      Rate
		lo, hi float64
	}{
		{Rate{0, 10}, 0, 0.2775},
		{Rate{10, 10}, 0.7225, 1},
		{Rate{5, 10}, 0.2366, 0.7634},
		{Rate{100, 1000}, 0.0829, 0.1202},
		{Rate{}, 0, 1},
	} {
		lo, hi := c.r.Wilson()
		if d := max(lo-c.lo, c.lo-lo, hi-c.hi, c.hi-hi); d > 1e-4 {
			t.Errorf("Wilson(%d of %d) = [%.4f, %.4f], want [%.4f, %.4f]", c.r.Caught, c.r.Of, lo, hi, c.lo, c.hi)
		}
	}
}

func TestTable(t *testing.T) {
	rep := Report{Rows: []Row{
		{Adversary: "rational", Checks: "reveal", Members: 1, Processors: 8, K: 10, Jobs: 2, Micro: Rate{1, 4}, Job: Rate{1, 2}, RegularBlocks: 200, ExtraBlocks: 20, Bound: 0.0875},
		{Adversary: "copier", Checks: "lapse", Members: 1, Processors: 8, K: 10, Jobs: 2, Micro: Rate{3, 3}, Job: Rate{2, 2}, RegularBlocks: 200, ExtraBlocks: 22, HonestNamed: 1},
	}}
	got := rep.Table()
	for _, want := range []string{"ADVERSARY", "rational  ", "0.2500 [", "0.0875", "0.1000\n", "copier", "1.0000 [0.4385, 1.0000]", "  1  ", "0.1100\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}
