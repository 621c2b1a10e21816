package checksim

import (
	"errors"
	"fmt"

	"github.com/jobmesh/jobmesh/jobs"
)

// ErrConfig is wrapped by every Config.Validate error.
var ErrConfig = errors.New("checksim: invalid config")

// Config is one simulation. Zero fields take their defaults in Run.
type Config struct {
	Jobs       int    // jobs to simulate; default 2000
	Processors int    // P, simulated processors; default 8
	N          uint32 // regular MicroJobs per MacroJob; default jobs.DefaultMicroJobsPerMacro (10)
	K          uint32 // blocks per regular MicroJob; default jobs.DefaultBlocksPerMicro (10)
	KVerifier  uint32 // K', verifier blocks per MacroJob, 1..N; default min(K, N)
	Blocks     uint64 // blocks per job; default N·K (one MacroJob)
	Seed       uint64 // seeds every draw of the run; any value, 0 included
	// Adversary is the strategy of the processors it controls; default
	// Rational{}.
	Adversary Adversary
	// Lapse: the DApp stays silent, so the checks come from the lapse seed
	// of the commitments (finish.LapseSeed); default false: the DApp
	// reveals its secret.
	Lapse bool
	// Public: the baseline in which the checks are drawn from the job's
	// public seed commitment, known before anyone commits; default false.
	// Not with Lapse.
	Public bool
	Salts  int // salts a steering adversary tries on its last commitment (Adversary.Steers), 1 for none; default 1000
}

// DefaultConfig returns a Config with every default filled in.
func DefaultConfig() Config {
	var c Config
	c.applyDefaults()
	return c
}

func (c *Config) applyDefaults() {
	if c.Jobs == 0 {
		c.Jobs = 2000
	}
	if c.Processors == 0 {
		c.Processors = 8
	}
	if c.N == 0 {
		c.N = jobs.DefaultMicroJobsPerMacro
	}
	if c.K == 0 {
		c.K = jobs.DefaultBlocksPerMicro
	}
	if c.KVerifier == 0 {
		c.KVerifier = min(c.K, c.N)
	}
	if c.Blocks == 0 {
		c.Blocks = uint64(c.N) * uint64(c.K)
	}
	if c.Adversary == nil {
		c.Adversary = Rational{}
	}
	if c.Salts == 0 {
		c.Salts = 1000
	}
}

// Validate reports every field out of its range, joined.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if c.Jobs < 1 {
		bad("jobs %d, want at least 1", c.Jobs)
	}
	if c.N < 1 || c.N > jobs.MaxMicroJobsPerMacro {
		bad("N %d not in 1..%d", c.N, jobs.MaxMicroJobsPerMacro)
	}
	if c.K < 1 || c.K > jobs.MaxBlocksPerMicro {
		bad("K %d not in 1..%d", c.K, jobs.MaxBlocksPerMicro)
	}
	if c.KVerifier < 1 || c.KVerifier > c.N {
		bad("K' %d not in 1..N (%d)", c.KVerifier, c.N)
	}
	if c.Blocks < 1 || c.Blocks > jobs.MaxBlocks {
		bad("blocks %d not in 1..%d", c.Blocks, jobs.MaxBlocks)
	}
	if c.Salts < 0 {
		bad("salts %d, want at least 0", c.Salts)
	}
	if c.Lapse && c.Public {
		bad("lapse and public seed together")
	}
	if c.Adversary == nil {
		bad("no adversary")
	} else {
		if err := c.Adversary.Validate(); err != nil {
			bad("adversary %s: %v", c.Adversary.Name(), err)
		}
		// Two honest processors at least: a copied MicroJob's real runner
		// and the re-runners of a self-checked block come from them.
		if m := c.Adversary.Members(); m < 1 || c.Processors < m+2 {
			bad("%d processors for an adversary of %d, want at least %d", c.Processors, m, m+2)
		}
	}
	return errors.Join(errs...)
}

// checks names where the run's check seed comes from.
func (c Config) checks() string {
	switch {
	case c.Public:
		return "public"
	case c.Lapse:
		return "lapse"
	}
	return "reveal"
}
