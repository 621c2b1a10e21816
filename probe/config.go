package probe

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidConfig wraps every configuration error of the package.
var ErrInvalidConfig = errors.New("probe: invalid config")

// Config is the probe schedule. Every node of a mesh must use the same
// values.
type Config struct {
	// Window is the QoS window: each advertised processor challenges once
	// per window, at an offset in its first half. 0 turns probes off (a
	// test that wants no probe traffic). Default 30m.
	Window time.Duration
	// Deadline is how long after its challenge a member's records count.
	// At most half the Window, so a probe ends inside its window. Default
	// 60s.
	Deadline time.Duration
	// History is how many windows of probes, the latest, the QoS ledger
	// replays. Default 6.
	History int
}

// MaxGroup is the most members a challenge names, its challenger
// included.
const MaxGroup = 3

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{Window: 30 * time.Minute, Deadline: time.Minute, History: 6}
}

// Enabled reports whether probes run.
func (c Config) Enabled() bool { return c.Window > 0 }

// Validate checks the config.
func (c Config) Validate() error {
	if c.Window == 0 {
		return nil
	}
	if c.Window < time.Second || c.Window%time.Second != 0 {
		return fmt.Errorf("%w: window %v must be whole seconds, at least 1s", ErrInvalidConfig, c.Window)
	}
	if c.Deadline <= 0 || c.Deadline > c.Window/2 {
		return fmt.Errorf("%w: deadline %v must be in (0, window/2]", ErrInvalidConfig, c.Deadline)
	}
	if c.History < 1 || c.History > 1000 {
		return fmt.Errorf("%w: history %d must be in [1, 1000]", ErrInvalidConfig, c.History)
	}
	return nil
}
