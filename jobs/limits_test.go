package jobs

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestLimitsEncoding: a JobInfo without limits encodes as before (no
// "limits" member, the same ID); one with limits carries all three and
// decodes to them; a "limits" member that asks for nothing, or limits out
// of range, are refused.
func TestLimitsEncoding(t *testing.T) {
	plain := validJob()
	enc := plain.Encode()
	if bytes.Contains(enc, []byte("limits")) {
		t.Fatalf("a job without limits encodes them: %s", enc)
	}
	limited := validJob()
	limited.Limits = Limits{BlockTimeoutS: 5, MemoryMiB: 64}
	lenc := limited.Encode()
	if !bytes.HasSuffix(lenc, []byte(`,"task_size":42,"limits":{"block_timeout_s":5,"memory_mib":64,"output_mib":0}}`)) {
		t.Fatalf("encoding %s", lenc)
	}
	got, err := Decode(lenc)
	if err != nil || got.Limits != limited.Limits || got.ID() != limited.ID() || limited.ID() == plain.ID() {
		t.Fatalf("decoded %+v (%v)", got, err)
	}
	empty := bytes.Replace(enc, []byte(`"task_size":42}`), []byte(`"task_size":42,"limits":{"block_timeout_s":0,"memory_mib":0,"output_mib":0}}`), 1)
	if _, err := Decode(empty); !errors.Is(err, ErrNonCanonical) {
		t.Fatalf("empty limits: %v", err)
	}
	over := validJob()
	over.Limits = Limits{BlockTimeoutS: MaxBlockTimeoutS + 1, MemoryMiB: MaxBlockMemoryMiB + 1, OutputMiB: MaxBlockOutputMiB + 1}
	_, err = Decode(over.Encode())
	for _, want := range []string{"limits.block_timeout_s: jobs: invalid per-block limits: 3601 not in 0..3600",
		"limits.memory_mib", "limits.output_mib"} {
		if !errors.Is(err, ErrInvalidLimits) || !strings.Contains(err.Error(), want) {
			t.Fatalf("limits over range: %v, want %q", err, want)
		}
	}
}
