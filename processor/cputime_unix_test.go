//go:build unix

package processor_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time this process has used (user + system). The
// benchmarks report it per operation beside wall time because a shared
// build machine's wall time includes waiting for a core.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
