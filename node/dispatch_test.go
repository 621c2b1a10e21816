package node

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/dispatch"
)

// TestDispatchSectionRoundTrip: the [dispatch] section written by init
// reads back as the dispatch defaults, a changed value reaches the
// processor config, and unknown keys and bad values are refused.
func TestDispatchSectionRoundTrip(t *testing.T) {
	cfg := DefaultConfig()
	if got := cfg.ProcessorConfig().Dispatch; !reflect.DeepEqual(got, dispatch.DefaultConfig()) {
		t.Fatalf("default [dispatch] is %+v, want dispatch.DefaultConfig()", got)
	}
	cfg.Dispatch.UnitTime = Duration(3 * time.Second)
	cfg.Dispatch.RoundScores = []uint32{7, 3}
	b, err := cfg.Encode()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), ConfigFile)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Dispatch, cfg.Dispatch) {
		t.Fatalf("[dispatch] read back as %+v, wrote %+v", got.Dispatch, cfg.Dispatch)
	}
	pc := got.ProcessorConfig()
	if pc.Dispatch.UnitTime != 3*time.Second || pc.AdvertTTL != time.Duration(cfg.Dispatch.AdvertTTL) {
		t.Fatalf("processor config did not take [dispatch]: %+v", pc.Dispatch)
	}

	for name, text := range map[string]string{
		"unknown key":     "[dispatch]\nalpha = 3\n",
		"zero alpha":      "[dispatch]\nqueue_alpha = 0.0\n",
		"rising scores":   "[dispatch]\nround_scores = [1, 5]\n",
		"too many kicks":  "[dispatch]\nkick_timeouts = 9\n",
		"zero advert ttl": "[dispatch]\nadvert_ttl = \"0s\"\n",
	} {
		p := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadConfig(p); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: got %v, want ErrInvalidConfig", name, err)
		}
	}
}
