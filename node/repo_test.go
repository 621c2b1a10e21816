package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"

	"github.com/jobmesh/jobmesh/api"
)

// newTestRepo initialises a repo with the default config in a temp dir
// and opens it; it is closed when the test ends.
func newTestRepo(t *testing.T) *Repo {
	t.Helper()
	dir := t.TempDir()
	if err := InitRepo(dir, DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestDatastoreFiltersAbsentKeys: the repo datastore answers lookups of
// absent keys from its Bloom filters instead of reading table blocks.
func TestDatastoreFiltersAbsentKeys(t *testing.T) {
	r := newTestRepo(t)
	d, err := r.OpenDatastore()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	for i := range 1000 {
		if err := d.Put(ctx, ds.NewKey(fmt.Sprintf("/present/%d", i)), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.DB.Flush(); err != nil { // into a table, where filters live
		t.Fatal(err)
	}
	for i := range 1000 {
		if has, err := d.Has(ctx, ds.NewKey(fmt.Sprintf("/present/%d", i+5000))); err != nil || has {
			t.Fatalf("absent key: has %v, err %v", has, err)
		}
	}
	if has, err := d.Has(ctx, ds.NewKey("/present/7")); err != nil || !has {
		t.Fatalf("present key: has %v, err %v", has, err)
	}
	if m := d.DB.Metrics(); m.Filter.Hits < 900 {
		t.Fatalf("the filters ruled out %d of 1000 absent keys", m.Filter.Hits)
	}
}

// TestAPIToken: a new repo has a private random token; a repo without one
// (made before tokens) gets one on open; a token others can read, or a
// malformed one, is refused.
func TestAPIToken(t *testing.T) {
	r := newTestRepo(t)
	path := filepath.Join(r.Dir, APITokenFile)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v (%v)", fi, err)
	}
	tok, err := r.APIToken()
	if err != nil || len(tok) != 64 {
		t.Fatalf("token %q (%v)", tok, err)
	}
	if read, err := ReadAPIToken(r.Dir); err != nil || read != tok {
		t.Fatalf("ReadAPIToken %q (%v), want %q", read, err, tok)
	}
	other := newTestRepo(t)
	if o, _ := other.APIToken(); o == tok {
		t.Fatal("two repos share a token")
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	fresh, err := r.APIToken()
	if err != nil || len(fresh) != 64 || fresh == tok {
		t.Fatalf("token of a repo without one: %q (%v)", fresh, err)
	}
	if again, err := r.APIToken(); err != nil || again != fresh {
		t.Fatalf("the created token is not kept: %q (%v)", again, err)
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.APIToken(); !errors.Is(err, ErrBadAPIToken) {
		t.Fatalf("a token others can read: %v", err)
	}
	if err := os.WriteFile(path, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := r.APIToken(); !errors.Is(err, ErrBadAPIToken) {
		t.Fatalf("a malformed token: %v", err)
	}
}

// TestAPIConfigValidation: the [api] section's limits are checked.
func TestAPIConfigValidation(t *testing.T) {
	for name, edit := range map[string]func(*api.Config){
		"zero read timeout":         func(c *api.Config) { c.ReadTimeout = 0 },
		"zero idle timeout":         func(c *api.Config) { c.IdleTimeout = 0 },
		"per client over the cap":   func(c *api.Config) { c.MaxEventStreamsPerClient = c.MaxEventStreams + 1 },
		"no streams":                func(c *api.Config) { c.MaxEventStreams = 0 },
		"host with a path":          func(c *api.Config) { c.AllowedHosts = []string{"example.com/x"} },
		"origin without a scheme":   func(c *api.Config) { c.AllowedOrigins = []string{"example.com"} },
		"origin with a path":        func(c *api.Config) { c.AllowedOrigins = []string{"https://example.com/app"} },
		"address without a port":    func(c *api.Config) { c.Address = "127.0.0.1" },
		"upload limit out of range": func(c *api.Config) { c.MaxUploadMiB = 0 },
	} {
		cfg := DefaultConfig()
		edit(&cfg.API)
		if err := cfg.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
	cfg := DefaultConfig()
	cfg.API.AllowedHosts = []string{"node.lan"}
	cfg.API.AllowedOrigins = []string{"https://dash.example:8443"}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	// The written file round-trips.
	b, err := cfg.Encode()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), ConfigFile)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := LoadConfig(path)
	if err != nil || !slices.Equal(got.API.AllowedHosts, cfg.API.AllowedHosts) || got.API.IdleTimeout != cfg.API.IdleTimeout {
		t.Fatalf("loaded %+v (%v)", got.API, err)
	}
}

// TestOldLayoutIsNamed: a repo that still holds a layout 1 store is told
// so at start; one without says nothing.
func TestOldLayoutIsNamed(t *testing.T) {
	ctx := context.Background()
	for _, old := range []bool{false, true} {
		d := dssync.MutexWrap(ds.NewMapDatastore())
		if old {
			if err := d.Put(ctx, ds.NewKey(oldLayoutNamespace+"/s/k/nodes/x"), []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		warnOldLayout(ctx, d, slog.New(slog.NewTextHandler(&buf, nil)))
		if got := strings.Contains(buf.String(), "mesh layout 1"); got != old {
			t.Fatalf("old store %v: warned %v (%q)", old, got, buf.String())
		}
	}
}
