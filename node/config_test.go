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

// TestConfigBlockLimits: [processor] block_timeout and
// max_block_output_mib default to the sandbox's 30 s and 64 MiB, reach the
// executor's config when set, and are refused out of range by name.
func TestConfigBlockLimits(t *testing.T) {
	enc, err := DefaultConfig().Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"", string(enc)} {
		cfg, err := loadConfigText(t, text)
		if err != nil {
			t.Fatal(err)
		}
		w := cfg.ProcessorConfig().Wasm
		if w.Timeout != 30*time.Second || w.MaxOutputBytes != 64<<20 || w.MemoryLimitBytes != 256<<20 {
			t.Fatalf("default block limits %v, %d, %d", w.Timeout, w.MaxOutputBytes, w.MemoryLimitBytes)
		}
	}
	cfg, err := loadConfigText(t, "[processor]\nblock_timeout = \"5s\"\nmax_block_output_mib = 8\nmax_job_memory_mib = 128\n")
	if err != nil {
		t.Fatal(err)
	}
	if w := cfg.ProcessorConfig().Wasm; w.Timeout != 5*time.Second || w.MaxOutputBytes != 8<<20 || w.MemoryLimitBytes != 128<<20 {
		t.Fatalf("set block limits %v, %d, %d", w.Timeout, w.MaxOutputBytes, w.MemoryLimitBytes)
	}
	for text, msg := range map[string]string{
		"[processor]\nblock_timeout = \"0s\"\n":      "block_timeout 0s outside 1s..1h",
		"[processor]\nblock_timeout = \"2h\"\n":      "block_timeout 2h0m0s outside 1s..1h",
		"[processor]\nmax_block_output_mib = 0\n":    "max_block_output_mib 0 outside 1..4096",
		"[processor]\nmax_block_output_mib = 5000\n": "max_block_output_mib 5000 outside 1..4096",
	} {
		if _, err := loadConfigText(t, text); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: got %v, want %q", text, err, msg)
		}
	}
}

// TestConfigProgressWindowAndCatchUp checks [processor] progress_window
// (the processor's default when absent, 0 allowed, refused past the
// disclose grace) and the processor's catch-up, which follows the store's
// timings: two rebroadcasts and a DAG walk's wait.
func TestConfigProgressWindowAndCatchUp(t *testing.T) {
	if got, want := DefaultConfig().ProcessorConfig().ProgressWindow, processor.DefaultConfig().ProgressWindow; got != want {
		t.Fatalf("default progress window %v, want %v", got, want)
	}
	cfg, err := loadConfigText(t, "[processor]\nprogress_window = \"250ms\"\n[store]\nrebroadcast = \"2s\"\ndag_sync_timeout = \"5s\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if pc := cfg.ProcessorConfig(); pc.ProgressWindow != 250*time.Millisecond || pc.CatchUp != 9*time.Second {
		t.Fatalf("progress window %v, catch-up %v; want 250ms and 9s", pc.ProgressWindow, pc.CatchUp)
	}
	if cfg, err := loadConfigText(t, "[processor]\nprogress_window = \"0s\"\n"); err != nil || cfg.ProcessorConfig().ProgressWindow != 0 {
		t.Fatalf("progress window 0: %v", err)
	}
	for _, bad := range []string{"-1s", "31s"} {
		if _, err := loadConfigText(t, "[processor]\nprogress_window = \""+bad+"\"\n"); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("progress window %s: got %v, want ErrInvalidConfig", bad, err)
		}
	}
}

// TestConfigJobStores: "auto" (the default) keeps job stores where the
// node has a chain; "on" and "off" say so whatever the chain; anything
// else is refused; an older config's bool reads as "on" (true) or "auto"
// (false, the default every such config spelled out).
func TestConfigJobStores(t *testing.T) {
	if got := DefaultConfig().Store.JobStores; got != JobStoresAuto {
		t.Fatalf("default job_stores %q, want auto", got)
	}
	for text, want := range map[string][2]bool{
		`"auto"`: {false, true}, `"on"`: {true, true}, `"off"`: {false, false}, "true": {true, true}, "false": {false, true},
	} {
		cfg, err := loadConfigText(t, "[store]\njob_stores = "+text+"\n")
		if err != nil {
			t.Fatal(err)
		}
		if got := [2]bool{cfg.Store.JobStores.On(false), cfg.Store.JobStores.On(true)}; got != want {
			t.Errorf("%s: on without and with a chain %v, want %v", text, got, want)
		}
	}
	for _, bad := range []string{`"yes"`, `""`, `1`} {
		if _, err := loadConfigText(t, "[store]\njob_stores = "+bad+"\n"); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("job_stores = %s: got %v, want ErrInvalidConfig", bad, err)
		}
	}
}
