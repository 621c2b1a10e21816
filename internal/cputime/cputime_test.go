package cputime

import "testing"

// Work done shows up as CPU time.
func TestProcessGrows(t *testing.T) {
	start := Process()
	if start < 0 {
		t.Skip("CPU time is not readable on this platform")
	}
	x := 0
	for i := range 50_000_000 {
		x ^= i
	}
	if end := Process(); end <= start {
		t.Fatalf("CPU time went from %v to %v (%d)", start, end, x)
	}
}
