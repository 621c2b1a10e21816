//go:build !unix

package meshtest

import (
	"testing"
	"time"
)

// cpuTime is not measured here; a negative value skips the metric.
func cpuTime(*testing.B) time.Duration { return -1 }
