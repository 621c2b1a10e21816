package p2p

import "time"

// Backoff is an exponential redial schedule for one peer. It reads no clock:
// callers pass the time, so its behaviour tests deterministically.
type Backoff struct {
	min, max time.Duration
	delay    time.Duration
	next     time.Time
}

// NewBackoff returns a schedule that is ready at once, then waits min, 2·min,
// … up to max after consecutive failures.
func NewBackoff(minDelay, maxDelay time.Duration) *Backoff {
	return &Backoff{min: minDelay, max: maxDelay}
}

// Ready reports whether a dial may be attempted at now.
func (b *Backoff) Ready(now time.Time) bool { return !now.Before(b.next) }

// Failed records a failed dial at now and schedules the next attempt.
func (b *Backoff) Failed(now time.Time) {
	switch {
	case b.delay == 0:
		b.delay = b.min
	case b.delay < b.max:
		b.delay = min(2*b.delay, b.max)
	}
	b.next = now.Add(b.delay)
}

// Delay is the current wait after a failure.
func (b *Backoff) Delay() time.Duration { return b.delay }

// Reset forgets past failures.
func (b *Backoff) Reset() { b.delay, b.next = 0, time.Time{} }
