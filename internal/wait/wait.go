// Package wait holds the wait-until helper that jobmesh's tests use instead
// of sleeping: poll a condition until it holds or a deadline passes.
package wait

import (
	"fmt"
	"time"
)

// TB is the part of testing.TB that Until needs.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Until polls cond every few milliseconds until it returns nil, and fails
// the test with cond's last error if that has not happened within timeout.
func Until(t TB, timeout time.Duration, cond func() error) {
	t.Helper()
	if err := For(timeout, cond); err != nil {
		t.Fatalf("%v", err)
	}
}

// For is Until without a test: it returns cond's last error on timeout.
func For(timeout time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	delay := time.Millisecond
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still not true after %s: %w", timeout, err)
		}
		time.Sleep(delay) // polling interval, not synchronisation: cond decides
		delay = min(2*delay, 50*time.Millisecond)
	}
}
