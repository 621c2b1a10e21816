//go:build !unix

package processor_test

import (
	"testing"
	"time"
)

// cpuTime is not measured here; -1 makes benchFlow skip the metric.
func cpuTime(*testing.B) time.Duration { return -1 }
