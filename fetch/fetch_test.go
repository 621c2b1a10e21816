package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// newTestRegistry builds a Registry from DefaultConfig changed by mutate,
// with metrics on a private registry. The test servers listen on
// 127.0.0.1, so private addresses are allowed; guard_test.go turns that
// off again.
func newTestRegistry(t *testing.T, mutate func(*Config)) *Registry {
	t.Helper()
	cfg := DefaultConfig()
	cfg.AllowPrivateAddresses = true
	cfg.Registerer = prometheus.NewRegistry()
	if mutate != nil {
		mutate(&cfg)
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

// counterValue reads a counter without going through a scrape.
func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// testData returns n deterministic pseudo-random bytes.
func testData(n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{1}).Read(b)
	return b
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	bad := []func(*Config){
		func(c *Config) { c.Timeout = 0 },
		func(c *Config) { c.DialTimeout = -1 },
		func(c *Config) { c.FileRoot = "relative/dir" },
		func(c *Config) { c.SFTP.Password = "pw" }, // no host key check
	}
	for i, mutate := range bad {
		cfg := DefaultConfig()
		mutate(&cfg)
		if err := cfg.Validate(); err == nil {
			t.Errorf("case %d: Validate accepted %+v", i, cfg)
		}
		if _, err := New(cfg); err == nil {
			t.Errorf("case %d: New accepted an invalid config", i)
		}
	}
}

func TestRegistryRejectsUnsupportedAndDisabledSchemes(t *testing.T) {
	r := newTestRegistry(t, nil)
	ctx := context.Background()
	for _, uri := range []string{
		"gopher://example.org/x",
		"file:///etc/hostname",   // no FileRoot
		"http://example.org/x",   // plaintext not allowed
		"ws://example.org/x",     // plaintext not allowed
		"sftp://u@example.org/x", // no credentials
		"ipfs://bafkqaaa",        // no IPFS
		"example.org/no-scheme",  // no scheme at all
	} {
		if _, err := r.Fetch(ctx, uri, 10); !errors.Is(err, ErrUnsupportedScheme) {
			t.Errorf("Fetch(%q) = %v, want ErrUnsupportedScheme", uri, err)
		}
	}
	if _, err := r.Fetch(ctx, "https://example.org/x", -1); !errors.Is(err, ErrInvalidLimit) {
		t.Errorf("negative limit: %v", err)
	}
	if _, err := r.Fetch(ctx, "https://exa mple.org/%zz", 10); !errors.Is(err, ErrInvalidURI) {
		t.Errorf("bad URI: %v", err)
	}
	if got := counterValue(t, r.metrics.failures.WithLabelValues("gopher", "unsupported")); got != 1 {
		t.Errorf("unsupported failures metric = %v, want 1", got)
	}
}

// memFetcher serves fixed content in small reads, to exercise the limit
// logic of the Registry on its own.
type memFetcher struct{ content []byte }

func (m memFetcher) Fetch(context.Context, string, int64) (io.ReadCloser, error) {
	return io.NopCloser(iotest.HalfReader(bytes.NewReader(m.content))), nil
}

func TestRegistryEnforcesLimitWhileStreaming(t *testing.T) {
	r := newTestRegistry(t, nil)
	content := testData(1000)
	r.Register("mem", memFetcher{content})
	sum := sha256.Sum256(content)
	ctx := context.Background()

	got, err := r.FetchVerified(ctx, "mem://x", sum, 1000) // exactly the limit
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("FetchVerified at the limit: %d bytes, %v", len(got), err)
	}
	if got, err := r.FetchVerified(ctx, "mem://x", sum, 999); !errors.Is(err, ErrTooLarge) || got != nil {
		t.Fatalf("FetchVerified over the limit: %d bytes, %v", len(got), err)
	}
	rc, err := r.Fetch(ctx, "mem://x", 10)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	n, err := io.Copy(io.Discard, rc)
	if n != 10 || !errors.Is(err, ErrTooLarge) {
		t.Fatalf("streamed %d bytes, %v; want 10 and ErrTooLarge", n, err)
	}
	if _, err := r.FetchVerified(ctx, "mem://x", [32]byte{}, 1000); !errors.Is(err, ErrHashMismatch) {
		t.Fatalf("wrong hash: %v", err)
	}
	if got := counterValue(t, r.metrics.failures.WithLabelValues("mem", "hash_mismatch")); got != 1 {
		t.Errorf("hash mismatch metric = %v", got)
	}
	if got := counterValue(t, r.metrics.bytesIn.WithLabelValues("mem")); got != 1000+999+10+1000 {
		t.Errorf("bytes metric = %v", got)
	}
}

func FuzzRegistryLimit(f *testing.F) {
	f.Add([]byte("hello"), int64(5))
	f.Add([]byte("hello"), int64(4))
	f.Add([]byte{}, int64(0))
	f.Add(bytes.Repeat([]byte{7}, 5000), int64(4096))
	f.Add([]byte("no limit"), int64(math.MaxInt64))
	cfg := DefaultConfig()
	r, err := New(cfg)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, content []byte, limit int64) {
		if limit < 0 {
			if _, err := r.Fetch(context.Background(), "x://", limit); !errors.Is(err, ErrInvalidLimit) {
				t.Fatalf("negative limit accepted: %v", err)
			}
			return
		}
		r.Register("mem", memFetcher{content})
		got, err := r.FetchVerified(context.Background(), "mem://x", sha256.Sum256(content), limit)
		if int64(len(content)) <= limit {
			if err != nil || !bytes.Equal(got, content) {
				t.Fatalf("len %d limit %d: %v", len(content), limit, err)
			}
		} else if !errors.Is(err, ErrTooLarge) || got != nil {
			t.Fatalf("len %d limit %d: got %d bytes, %v", len(content), limit, len(got), err)
		}
	})
}

func TestFileFetcher(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	content := testData(4096)
	if err := os.WriteFile(filepath.Join(root, "data.bin"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := newTestRegistry(t, func(c *Config) { c.FileRoot = root })
	ctx := context.Background()
	uri := "file://" + filepath.ToSlash(filepath.Join(root, "data.bin"))

	got, err := r.FetchVerified(ctx, uri, sha256.Sum256(content), int64(len(content)))
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("FetchVerified: %v", err)
	}
	if _, err := r.Fetch(ctx, uri, int64(len(content))-1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("too large: %v", err)
	}
	cases := map[string]error{
		"file://" + root + "/missing":                                  ErrNotFound,
		"file://" + outside + "/secret":                                ErrNotFound, // outside the root
		"file://" + root + "/../" + filepath.Base(outside) + "/secret": ErrNotFound,
		"file://" + root + "/dir":                                      ErrNotFound, // not a regular file
		"file://host" + root + "/data.bin":                             ErrInvalidURI,
	}
	for uri, want := range cases {
		if _, err := r.Fetch(ctx, uri, 1<<20); !errors.Is(err, want) {
			t.Errorf("Fetch(%q) = %v, want %v", uri, err, want)
		}
	}
	// A symlink inside the root that points out of it is not followed.
	if rc, err := r.Fetch(ctx, "file://"+root+"/link", 1<<20); err == nil {
		b, _ := io.ReadAll(rc)
		rc.Close()
		t.Fatalf("symlink escape read %q", b)
	}
}

func TestHTTPSFetcher(t *testing.T) {
	content := testData(100_000)
	mux := http.NewServeMux()
	mux.HandleFunc("/data", func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "data", time.Time{}, bytes.NewReader(content))
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		// No Content-Length: the limit must hold while streaming.
		for i := 0; i < len(content); i += 10_000 {
			w.Write(content[i : i+10_000])
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/error", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) })
	mux.HandleFunc("/forbidden", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusForbidden) })
	srv := httptest.NewTLSServer(mux)
	plain := httptest.NewServer(mux)
	mux.HandleFunc("/to-plain", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+"/data", http.StatusFound)
	})
	t.Cleanup(func() { srv.Close(); plain.Close() })
	tlsCfg := srv.Client().Transport.(*http.Transport).TLSClientConfig
	r := newTestRegistry(t, func(c *Config) { c.TLSConfig = tlsCfg; c.Timeout = 2 * time.Second })
	ctx := context.Background()
	sum := sha256.Sum256(content)

	for _, path := range []string{"/data", "/chunked"} {
		got, err := r.FetchVerified(ctx, srv.URL+path, sum, int64(len(content)))
		if err != nil || !bytes.Equal(got, content) {
			t.Fatalf("%s: %v", path, err)
		}
	}
	// Content-Length over the limit fails before the body is read.
	if _, err := r.Fetch(ctx, srv.URL+"/data", 1000); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Content-Length over limit: %v", err)
	}
	if _, err := r.FetchVerified(ctx, srv.URL+"/chunked", sum, 25_000); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("chunked over limit: %v", err)
	}
	if _, err := r.FetchVerified(ctx, srv.URL+"/data", [32]byte{1}, 1<<20); !errors.Is(err, ErrHashMismatch) {
		t.Fatalf("hash mismatch: %v", err)
	}
	for path, want := range map[string]error{
		"/missing":   ErrNotFound,
		"/error":     ErrUnreachable,
		"/forbidden": ErrBadResponse,
		"/to-plain":  ErrUnsupportedScheme, // no downgrade through a redirect
	} {
		if _, err := r.Fetch(ctx, srv.URL+path, 1<<20); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", path, err, want)
		}
	}
	if _, err := r.Fetch(ctx, plain.URL+"/data", 1<<20); !errors.Is(err, ErrUnsupportedScheme) {
		t.Fatalf("http:// without AllowPlaintext: %v", err)
	}

	// An untrusted certificate makes the source unreachable.
	strict := newTestRegistry(t, nil)
	if _, err := strict.Fetch(ctx, srv.URL+"/data", 1<<20); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("untrusted certificate: %v", err)
	}

	// Plaintext works once allowed.
	loose := newTestRegistry(t, func(c *Config) { c.AllowPlaintext = true })
	if got, err := loose.FetchVerified(ctx, plain.URL+"/data", sum, 1<<20); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("http:// with AllowPlaintext: %v", err)
	}

	// A closed server is unreachable.
	closed := httptest.NewServer(mux)
	closed.Close()
	if _, err := loose.Fetch(ctx, closed.URL+"/data", 1<<20); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("closed server: %v", err)
	}
}

func TestHTTPSFetcherTimeouts(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/hang-headers", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	mux.HandleFunc("/hang-body", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", 1000)))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(func() { close(release); srv.Close() })
	tlsCfg := srv.Client().Transport.(*http.Transport).TLSClientConfig
	r := newTestRegistry(t, func(c *Config) { c.TLSConfig = tlsCfg; c.Timeout = 200 * time.Millisecond })
	ctx := context.Background()

	// A timeout before the response is a failure to connect like any
	// other: the generic error, the cause in the debug log only.
	_, err := r.Fetch(ctx, srv.URL+"/hang-headers", 1<<20)
	if err != ErrUnreachable {
		t.Fatalf("server that never answers: %v", err)
	}
	_, err = r.FetchVerified(ctx, srv.URL+"/hang-body", [32]byte{}, 1<<20)
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("server that stalls mid-body: %v", err)
	}

	// A caller's cancel is not reported as the source's fault.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.Fetch(cctx, srv.URL+"/hang-headers", 1<<20); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled fetch: %v", err)
	}
}

func BenchmarkFetchVerifiedFile16MiB(b *testing.B) {
	root := b.TempDir()
	content := testData(16 << 20)
	if err := os.WriteFile(filepath.Join(root, "data.bin"), content, 0o644); err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.FileRoot = root
	r, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	sum := sha256.Sum256(content)
	uri := "file://" + filepath.ToSlash(filepath.Join(root, "data.bin"))
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.FetchVerified(context.Background(), uri, sum, int64(len(content))); err != nil {
			b.Fatal(err)
		}
	}
}
