package node

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/processor"
)

// TestConfigHoldWait checks [processor] hold_wait: the processor's default
// when absent, passed on when set, 0 allowed (no wait), negative refused.
func TestConfigHoldWait(t *testing.T) {
	if got, want := DefaultConfig().ProcessorConfig().HoldWait, processor.DefaultConfig().HoldWait; got != want {
		t.Fatalf("default hold wait %v, want %v", got, want)
	}
	enc, err := DefaultConfig().Encode()
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		text string
		want time.Duration
	}{
		"absent":  {"", processor.DefaultConfig().HoldWait},
		"encoded": {string(enc), processor.DefaultConfig().HoldWait},
		"set":     {"[processor]\nhold_wait = \"5s\"\n", 5 * time.Second},
		"no wait": {"[processor]\nhold_wait = \"0s\"\n", 0},
	} {
		cfg, err := loadConfigText(t, tc.text)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := cfg.ProcessorConfig().HoldWait; got != tc.want {
			t.Errorf("%s: hold wait %v, want %v", name, got, tc.want)
		}
	}
	if _, err := loadConfigText(t, "[processor]\nhold_wait = \"-1s\"\n"); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("negative hold wait: got %v, want ErrInvalidConfig", err)
	}
}

// loadConfigText loads a config file holding text.
func loadConfigText(t *testing.T, text string) (Config, error) {
	t.Helper()
	p := t.TempDir() + "/config.toml"
	if err := writeFileAtomic(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return LoadConfig(p)
}

// TestAPISectionKeys: the [api] section takes the keys the written file
// has, and refuses what only code sets (the token lives in api.token).
func TestAPISectionKeys(t *testing.T) {
	cfg, err := loadConfigText(t, "[api]\nread_timeout = \"7s\"\nmax_event_streams = 10\n")
	if err != nil || cfg.API.ReadTimeout != Duration(7*time.Second) || cfg.API.MaxEventStreams != 10 {
		t.Fatalf("read_timeout and max_event_streams: %+v (%v)", cfg.API, err)
	}
	for _, key := range []string{"token = \"" + strings.Repeat("x", 40) + "\"", "max_header_bytes = 5000", "login_ttl = \"1s\"", "events = {}"} {
		if _, err := loadConfigText(t, "[api]\n"+key+"\n"); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: got %v, want ErrInvalidConfig", key, err)
		}
	}
}
