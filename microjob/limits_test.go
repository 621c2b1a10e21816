package microjob

import (
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/wasm"
)

// TestJobLimits: a job's limits convert to the sandbox's units, and a job
// asking for more than an executor allows, in any one of them, exceeds it.
func TestJobLimits(t *testing.T) {
	cfg := wasm.DefaultConfig() // 30 s, 256 MiB, 64 MiB
	info := &jobs.JobInfo{Limits: jobs.Limits{BlockTimeoutS: 5, MemoryMiB: 64, OutputMiB: 1}}
	if l := BlockLimits(info); l != (wasm.Limits{Timeout: 5 * time.Second, MemoryLimitBytes: 64 << 20, MaxOutputBytes: 1 << 20}) {
		t.Fatalf("limits %+v", l)
	}
	if Exceeds(info, cfg) || Exceeds(&jobs.JobInfo{}, cfg) {
		t.Fatal("a job within the limits exceeds them")
	}
	for _, l := range []jobs.Limits{{BlockTimeoutS: 31}, {MemoryMiB: 257}, {OutputMiB: 65}} {
		if !Exceeds(&jobs.JobInfo{Limits: l}, cfg) {
			t.Fatalf("%+v does not exceed the defaults", l)
		}
	}
}
