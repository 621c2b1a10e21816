package macrojob

import (
	"fmt"
	"log/slog"
	"time"
)

// Config tunes a Queue. The zero value of a field means its default.
type Config struct {
	// ProcessingTimeout is how long a lock lasts: an item locked at queue time
	// t is open again at t+ProcessingTimeout unless processed. Default 10m.
	ProcessingTimeout time.Duration
	// OwnerTimeout is the owner silence after which the first successor takes
	// over; the k-th successor waits k×OwnerTimeout. Default 30s.
	OwnerTimeout time.Duration
	// Rebroadcast is the interval R at which the owner re-publishes its
	// snapshot, a requester its request and a processor its unacknowledged
	// results; it must be below OwnerTimeout. Default 5s.
	Rebroadcast time.Duration
	// MaxLocksPerTurn is M, the most MicroJobs an owner locks for itself per
	// turn (one turn per Request). While other members wait for a turn it
	// locks no more than a fair share, max(1, open ÷ (1 + pending)).
	// Default 1.
	MaxLocksPerTurn int
	// MaxMembers caps the processors one queue admits, at most the wire limit
	// MaxMembers. Default 256.
	MaxMembers int
	// Avoid, when set, names open items the owner should not lock for
	// itself, given the items it holds (taken): it locks them only when
	// nothing else is open, so a queue never stalls. The processor avoids
	// running a MacroJob's verifier together with the regular MicroJobs it
	// checks. A local choice: the snapshot shows only the locks. Default
	// nil: any open item.
	Avoid func(id ID, taken []ID) bool
	// Chooser picks the next owner among pending requesters. Default
	// SeededChooser.
	Chooser Chooser
	// Logger receives debug records of ownership changes. Default discards.
	Logger *slog.Logger
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{
		ProcessingTimeout: 10 * time.Minute,
		OwnerTimeout:      30 * time.Second,
		Rebroadcast:       5 * time.Second,
		MaxLocksPerTurn:   1,
		MaxMembers:        256,
		Chooser:           SeededChooser{},
		Logger:            slog.New(slog.DiscardHandler),
	}
}

// withDefaults fills zero fields with their defaults.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.ProcessingTimeout == 0 {
		c.ProcessingTimeout = d.ProcessingTimeout
	}
	if c.OwnerTimeout == 0 {
		c.OwnerTimeout = d.OwnerTimeout
	}
	if c.Rebroadcast == 0 {
		c.Rebroadcast = d.Rebroadcast
	}
	if c.MaxLocksPerTurn == 0 {
		c.MaxLocksPerTurn = d.MaxLocksPerTurn
	}
	if c.MaxMembers == 0 {
		c.MaxMembers = d.MaxMembers
	}
	if c.Chooser == nil {
		c.Chooser = d.Chooser
	}
	if c.Logger == nil {
		c.Logger = d.Logger
	}
	return c
}

// Validate reports a config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.ProcessingTimeout <= 0:
		return fmt.Errorf("%w: ProcessingTimeout %v", ErrInvalidConfig, c.ProcessingTimeout)
	case c.Rebroadcast <= 0:
		return fmt.Errorf("%w: Rebroadcast %v", ErrInvalidConfig, c.Rebroadcast)
	case c.OwnerTimeout <= c.Rebroadcast:
		// A live owner must be heard at least once per OwnerTimeout.
		return fmt.Errorf("%w: OwnerTimeout %v must exceed Rebroadcast %v", ErrInvalidConfig, c.OwnerTimeout, c.Rebroadcast)
	case c.MaxLocksPerTurn < 1:
		return fmt.Errorf("%w: MaxLocksPerTurn %d", ErrInvalidConfig, c.MaxLocksPerTurn)
	case c.MaxMembers < 1 || c.MaxMembers > MaxMembers:
		return fmt.Errorf("%w: MaxMembers %d (1..%d)", ErrInvalidConfig, c.MaxMembers, MaxMembers)
	case c.Chooser == nil:
		return fmt.Errorf("%w: no Chooser", ErrInvalidConfig)
	case c.Logger == nil:
		return fmt.Errorf("%w: no Logger", ErrInvalidConfig)
	}
	return nil
}
