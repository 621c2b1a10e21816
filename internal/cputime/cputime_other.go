//go:build !unix

package cputime

import "time"

// Process is not measured here: -1.
func Process() time.Duration { return -1 }
