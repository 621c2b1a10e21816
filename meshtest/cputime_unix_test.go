//go:build unix

package meshtest

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time this process has used (user + system). The
// convergence benchmark reports it per write beside the latencies because
// on a shared machine the wall-clock figures include waiting for a core.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
