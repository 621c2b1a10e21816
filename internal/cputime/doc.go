// Package cputime reads the CPU time this process has used. Benchmarks
// report it beside wall time: on a shared machine wall time includes
// waiting for a core, and an in-process mesh's CPU time is its whole cost.
package cputime
