package chaos

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// ErrConfig is wrapped by every Config.Validate error.
var ErrConfig = errors.New("chaos: invalid config")

// Config is one chaos run. Zero fields take their defaults
// (DefaultConfig); rates are per job.
type Config struct {
	Seed uint64 // seeds every fault draw; any value, 0 included
	Jobs int    // jobs run one after another; default 6
	// From skips the first From jobs' runs but not their draws, so that
	// job From of a seed runs under the faults it had in the whole run:
	// a failure is repeated without the jobs before it.
	From       int
	Processors int // processors of the mesh; default 8
	// MaxLiars is the most processors that lie in one job; default
	// Processors/4, the share the dispute escalation is built for.
	MaxLiars int
	// KillRate is the probability that a job has an honest processor
	// killed; default 0.5.
	KillRate float64
	// BootstrapRate is the probability that a job with a kill has the
	// bootstrap node killed too; default 0.3.
	BootstrapRate float64
	CutRate       float64 // probability that a job has a link cut between two processors; default 0.5
	LiarRate      float64 // probability that a job has liars; default 0.5
	// Drop is the share of inbound pubsub messages every node ignores,
	// the whole run (p2p.Config.DropInbound); default 0.02.
	Drop float64
	// KillWithin: a kill comes at a uniform moment within this long of
	// the job's submission; default 6s.
	KillWithin time.Duration
	// JobTimeout bounds one job, from its submission to its release on
	// chain; default 3m.
	JobTimeout time.Duration
	// ProcessingTimeout is every processor's MicroJob processing timeout
	// (and lock TTL); default 6s. The goal for the time from the last
	// block to the verdict is twice it.
	ProcessingTimeout time.Duration
	// Picture is the Mandelbrot job's size in tiles (one block each);
	// default 5×4.
	Columns, Rows uint32
	// N and K slice the job: regular MicroJobs per MacroJob and blocks
	// per MicroJob; default 3 and 4.
	N, K uint32
	// Dir holds the members' repos; default a new temporary directory,
	// removed at the end.
	Dir string
	// Logger receives the mesh's logs; default discards them.
	Logger *slog.Logger
	// Progress, when set, is called after each job with its report.
	Progress func(JobReport)
}

// DefaultConfig returns a Config with every default filled in.
func DefaultConfig() Config {
	var c Config
	c.applyDefaults()
	return c
}

func (c *Config) applyDefaults() {
	setInt := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	setRate := func(p *float64, v float64) {
		if *p == 0 {
			*p = v
		}
	}
	setDur := func(p *time.Duration, v time.Duration) {
		if *p == 0 {
			*p = v
		}
	}
	setU32 := func(p *uint32, v uint32) {
		if *p == 0 {
			*p = v
		}
	}
	setInt(&c.Jobs, 6)
	setInt(&c.Processors, 8)
	setInt(&c.MaxLiars, c.Processors/4)
	setRate(&c.KillRate, 0.5)
	setRate(&c.BootstrapRate, 0.3)
	setRate(&c.CutRate, 0.5)
	setRate(&c.LiarRate, 0.5)
	setRate(&c.Drop, 0.02)
	setDur(&c.KillWithin, 6*time.Second)
	setDur(&c.JobTimeout, 3*time.Minute)
	setDur(&c.ProcessingTimeout, 6*time.Second)
	setU32(&c.Columns, 5)
	setU32(&c.Rows, 4)
	setU32(&c.N, 3)
	setU32(&c.K, 4)
}

// Validate reports every field out of its range, joined. A rate of 0
// takes its default; a negative rate turns the fault off.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if c.Jobs < 1 {
		bad("jobs %d, want at least 1", c.Jobs)
	}
	if c.From < 0 {
		bad("from %d, want at least 0", c.From)
	}
	// Four honest processors at least stay up and linked in every job:
	// a killed one, the two ends of a cut and the liars aside, the
	// honest side of a dispute still outvotes the liars.
	if min := 2*c.MaxLiars + 4; c.Processors < min {
		bad("%d processors for up to %d liars, want at least %d", c.Processors, c.MaxLiars, min)
	}
	if c.MaxLiars < 0 || 4*c.MaxLiars > c.Processors {
		bad("max liars %d not in 0..%d (a quarter of the processors)", c.MaxLiars, c.Processors/4)
	}
	for name, r := range map[string]float64{"kill": c.KillRate, "bootstrap": c.BootstrapRate, "cut": c.CutRate, "liar": c.LiarRate} {
		if r > 1 {
			bad("%s rate %v above 1", name, r)
		}
	}
	if c.Drop >= 0.5 {
		bad("drop %v, want below 0.5", c.Drop)
	}
	if c.KillWithin <= 0 || c.JobTimeout <= 0 || c.ProcessingTimeout < time.Second {
		bad("kill within %v, job timeout %v, processing timeout %v: want positive, the last at least 1s", c.KillWithin, c.JobTimeout, c.ProcessingTimeout)
	}
	if c.Columns < 1 || c.Rows < 1 || c.Columns*c.Rows > 256 {
		bad("picture %d×%d tiles, want 1..256 tiles", c.Columns, c.Rows)
	}
	if c.N < 1 || c.K < 1 {
		bad("N %d, K %d, want at least 1", c.N, c.K)
	}
	return errors.Join(errs...)
}

// on reports whether a fault of rate r is drawn by u in [0, 1).
func on(r, u float64) bool { return r > 0 && u < r }
