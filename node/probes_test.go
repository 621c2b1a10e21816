package node

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/probe"
)

// TestProbeSchedule: [dispatch] probe_window and probe_deadline default to
// probe.DefaultConfig(), reach the processor config, and a deadline past
// half the window is refused.
func TestProbeSchedule(t *testing.T) {
	if got, want := DefaultConfig().ProcessorConfig().Probes, probe.DefaultConfig(); got != want {
		t.Fatalf("default probes %+v, want %+v", got, want)
	}
	for text, want := range map[string]error{
		"[dispatch]\nprobe_window = \"20s\"\nprobe_deadline = \"5s\"\n":  nil,
		"[dispatch]\nprobe_window = \"20s\"\nprobe_deadline = \"15s\"\n": ErrInvalidConfig,
	} {
		p := filepath.Join(t.TempDir(), ConfigFile)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadConfig(p)
		if !errors.Is(err, want) {
			t.Fatalf("%q: %v, want %v", text, err, want)
		}
		if err == nil {
			if pc := cfg.ProcessorConfig().Probes; pc.Window != 20*time.Second || pc.Deadline != 5*time.Second {
				t.Fatalf("processor probes %+v", pc)
			}
		}
	}
}
