//go:build !unix

package dispatch

import (
	"testing"
	"time"
)

// cpuTime is not measured here; -1 makes reportCPU skip the metric.
func cpuTime(*testing.B) time.Duration { return -1 }
