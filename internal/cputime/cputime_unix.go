//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process is the CPU time (user + system) this process has used, or -1
// when it cannot be read.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
