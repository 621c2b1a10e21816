package wasm

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func newTestExecutor(t *testing.T, mutate func(*Config)) *Executor {
	t.Helper()
	cfg := DefaultConfig()
	cfg.MemoryLimitBytes = 4 << 20
	cfg.Timeout = 5 * time.Second
	cfg.MaxOutputBytes = 1 << 20
	if mutate != nil {
		mutate(&cfg)
	}
	e, err := New(cfg, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return e
}

func TestEcho(t *testing.T) {
	e := newTestExecutor(t, nil)
	for _, in := range [][]byte{nil, []byte("hello, mesh"), bytes.Repeat([]byte("0123456789"), 5000)} {
		out, err := e.Run(context.Background(), echoModule(), in)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if !bytes.Equal(out, in) {
			t.Fatalf("echo of %d bytes returned %d bytes", len(in), len(out))
		}
	}
}

// TestDeterministic runs a module that reads both clocks and random bytes, on
// two executors and twice on each, and expects identical output pinned to the
// documented epoch.
func TestDeterministic(t *testing.T) {
	code := clockRandModule()
	var outs [][]byte
	for range 2 {
		e := newTestExecutor(t, nil)
		for range 2 {
			out, err := e.Run(context.Background(), code, nil)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			outs = append(outs, out)
		}
	}
	for i, o := range outs {
		if !bytes.Equal(o, outs[0]) {
			t.Fatalf("run %d differs:\n%x\n%x", i, o, outs[0])
		}
	}
	out := outs[0]
	if len(out) != 56 {
		t.Fatalf("output %d bytes, want 56", len(out))
	}
	wall1 := int64(binary.LittleEndian.Uint64(out[0:]))
	mono := int64(binary.LittleEndian.Uint64(out[8:]))
	wall2 := int64(binary.LittleEndian.Uint64(out[16:]))
	if wall1 != Epoch.UnixNano() {
		t.Errorf("first wall clock reading %d, want Epoch %d", wall1, Epoch.UnixNano())
	}
	if mono != 0 {
		t.Errorf("first monotonic reading %d, want 0", mono)
	}
	if wall2 != wall1+int64(time.Millisecond) {
		t.Errorf("second wall clock reading %d, want first + 1ms", wall2)
	}
	// Test vector: the first 32 bytes of ChaCha8 (C2SP chacha8rand) keyed
	// with 32 zero bytes, the default seed.
	if got := hex.EncodeToString(out[24:56]); got != "d9877ece6d368aac1a6f419ec627c76b1bfb1fa37c41a11ea46add6a48d89474" {
		t.Errorf("random bytes %s, want the zero-seed ChaCha8 stream", got)
	}

	// A different seed gives different random bytes, same clocks.
	e := newTestExecutor(t, func(c *Config) { c.RandSeed[0] = 1 })
	other, err := e.Run(context.Background(), code, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !bytes.Equal(other[:24], out[:24]) || bytes.Equal(other[24:], out[24:]) {
		t.Errorf("seed change: clocks must match and random bytes differ")
	}
}

func TestHostileModules(t *testing.T) {
	fourGiB := uint32(65536)
	cases := []struct {
		name string
		code []byte
		want error
	}{
		{"unreachable", testModule{memMin: 1, body: []byte{opUnreachable}}.bytes(), ErrTrap},
		{"divide by zero", testModule{memMin: 1, body: cat(i32c(1), i32c(0), []byte{opI32DivU, opDrop})}.bytes(), ErrTrap},
		{"infinite loop", testModule{memMin: 1, body: []byte{opLoop, blockEmpty, opBr, 0, opEnd}}.bytes(), ErrTimeout},
		{"grow 4 GiB at once", testModule{memMin: 1, body: cat(
			i32c(65535), []byte{opMemoryGrow, 0}, i32c(-1), []byte{opI32Eq, opIf, blockEmpty, opUnreachable, opEnd},
		)}.bytes(), ErrMemoryLimit},
		{"grow until refused", testModule{memMin: 1, body: cat(
			[]byte{opLoop, blockEmpty}, i32c(16), []byte{opMemoryGrow, 0}, i32c(-1), []byte{opI32Ne, opBrIf, 0, opEnd},
			i32c(7), call(fnProcExit),
		)}.bytes(), ErrMemoryLimit},
		{"declares 4 GiB", testModule{memMin: 65536, memMax: &fourGiB}.bytes(), ErrMemoryLimit},
		{"output flood", testModule{memMin: 1, body: cat(
			store(0, 16), store(4, 4096),
			[]byte{opLoop, blockEmpty}, write(1, 0, 8), []byte{opBr, 0, opEnd},
		)}.bytes(), ErrOutputTooLarge},
		{"exit 3", testModule{memMin: 1, body: cat(i32c(3), call(fnProcExit))}.bytes(), ErrExit},
		{"garbage", []byte("this is not wasm"), ErrInvalidModule},
		{"empty", nil, ErrInvalidModule},
		{"truncated", echoModule()[:40], ErrInvalidModule},
		{"unknown import", testModule{memMin: 1, importModule: "env"}.bytes(), ErrInvalidModule},
		{"no _start", testModule{memMin: 1, startName: "main"}.bytes(), ErrInvalidModule},
	}
	e := newTestExecutor(t, func(c *Config) { c.Timeout = 200 * time.Millisecond })
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := e.Run(context.Background(), tc.code, []byte("input"))
			t.Logf("%s: %v", tc.name, err)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if out != nil {
				t.Fatalf("failed run returned %d bytes of output", len(out))
			}
			// The executor is unharmed: a good module still runs.
			good, err := e.Run(context.Background(), echoModule(), []byte("still alive"))
			if err != nil || string(good) != "still alive" {
				t.Fatalf("good module after %s: %q, %v", tc.name, good, err)
			}
		})
	}
}

// TestInfiniteRecursion: wazero bounds the call stack (about 100 MB, outside
// MemoryLimitBytes) and traps on overflow.
func TestInfiniteRecursion(t *testing.T) {
	e := newTestExecutor(t, func(c *Config) { c.Timeout = time.Minute })
	_, err := e.Run(context.Background(), testModule{memMin: 1, body: call(fnStart)}.bytes(), nil)
	if !errors.Is(err, ErrTrap) {
		t.Fatalf("err = %v, want ErrTrap", err)
	}
	if out, err := e.Run(context.Background(), echoModule(), []byte("ok")); err != nil || string(out) != "ok" {
		t.Fatalf("good module after overflow: %q, %v", out, err)
	}
}

func TestExitErrorCarriesCodeAndStderr(t *testing.T) {
	e := newTestExecutor(t, nil)
	code := testModule{memMin: 1, body: cat(
		store(0, 0x6d6f6f62), // "boom"
		store(16, 0), store(20, 4), write(2, 16, 24),
		i32c(42), call(fnProcExit),
	)}.bytes()
	_, err := e.Run(context.Background(), code, nil)
	var exit *ExitError
	if !errors.As(err, &exit) || !errors.Is(err, ErrExit) {
		t.Fatalf("err = %v, want *ExitError", err)
	}
	if exit.Code != 42 || exit.Stderr != "boom" {
		t.Fatalf("exit = %+v, want code 42 stderr boom", exit)
	}
}

func TestStderrIsBounded(t *testing.T) {
	e := newTestExecutor(t, func(c *Config) { c.MaxStderrBytes = 3 })
	code := testModule{memMin: 1, body: cat(
		store(0, 0x6d6f6f62),
		store(16, 0), store(20, 4), write(2, 16, 24), write(2, 16, 24),
		i32c(1), call(fnProcExit),
	)}.bytes()
	_, err := e.Run(context.Background(), code, nil)
	var exit *ExitError
	if !errors.As(err, &exit) || exit.Stderr != "boo" {
		t.Fatalf("err = %v, want stderr cut to 3 bytes", err)
	}
}

func TestOutputExactlyAtLimit(t *testing.T) {
	e := newTestExecutor(t, func(c *Config) { c.MaxOutputBytes = 10 })
	if out, err := e.Run(context.Background(), echoModule(), []byte("0123456789")); err != nil || len(out) != 10 {
		t.Fatalf("10 bytes at a 10-byte cap: %q, %v", out, err)
	}
	if _, err := e.Run(context.Background(), echoModule(), []byte("0123456789a")); !errors.Is(err, ErrOutputTooLarge) {
		t.Fatalf("11 bytes at a 10-byte cap: %v", err)
	}
}

func TestModuleTooLarge(t *testing.T) {
	e := newTestExecutor(t, func(c *Config) { c.MaxModuleBytes = 16 })
	if _, err := e.Run(context.Background(), echoModule(), nil); !errors.Is(err, ErrInvalidModule) {
		t.Fatalf("err = %v, want ErrInvalidModule", err)
	}
}

// TestPrepareCompilesAheadOfTheFirstRun: a prepared module is a cache
// hit for its first Run and counts as no run; Prepare refuses what Run
// refuses.
func TestPrepareCompilesAheadOfTheFirstRun(t *testing.T) {
	e := newTestExecutor(t, func(c *Config) { c.MaxModuleBytes = 1 << 10 })
	ctx := context.Background()
	if err := e.Prepare(ctx, echoModule()); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if got := testutil.ToFloat64(e.metrics.runs.WithLabelValues(outcomeOK)); got != 0 {
		t.Fatalf("Prepare counted %v runs", got)
	}
	if out, err := e.Run(ctx, echoModule(), []byte("x")); err != nil || string(out) != "x" {
		t.Fatalf("Run after Prepare: %q, %v", out, err)
	}
	if hits, misses := testutil.ToFloat64(e.metrics.cacheHits), testutil.ToFloat64(e.metrics.cacheMisses); hits != 1 || misses != 1 {
		t.Fatalf("cache hits %v and misses %v, want 1 and 1", hits, misses)
	}
	if err := e.Prepare(ctx, []byte("junk")); !errors.Is(err, ErrInvalidModule) {
		t.Fatalf("Prepare of junk: %v, want ErrInvalidModule", err)
	}
	if err := e.Prepare(ctx, make([]byte, 2<<10)); !errors.Is(err, ErrInvalidModule) {
		t.Fatalf("Prepare of an oversized module: %v, want ErrInvalidModule", err)
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Prepare(ctx, echoModule()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Prepare after Close: %v, want ErrClosed", err)
	}
}

func TestCallerCancel(t *testing.T) {
	e := newTestExecutor(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	loop := testModule{memMin: 1, body: []byte{opLoop, blockEmpty, opBr, 0, opEnd}}.bytes()
	if _, err := e.Run(ctx, loop, nil); !errors.Is(err, ErrCanceled) {
		t.Fatalf("err = %v, want ErrCanceled", err)
	}
}

func TestCloseStopsRunsAndIsIdempotent(t *testing.T) {
	e := newTestExecutor(t, nil)
	loop := testModule{memMin: 1, body: []byte{opLoop, blockEmpty, opBr, 0, opEnd}}.bytes()
	started := make(chan struct{})
	e.beforeStart = func() { close(started) }
	done := make(chan error, 1)
	go func() {
		_, err := e.Run(context.Background(), loop, nil)
		done <- err
	}()
	<-started
	if err := e.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("run during Close: %v, want ErrClosed", err)
	}
	if err := e.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	e.beforeStart = nil
	if _, err := e.Run(context.Background(), echoModule(), nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Run after Close: %v", err)
	}
}

func TestCompileCacheAndMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newTestExecutor(t, func(c *Config) { c.Registerer = reg; c.CacheEntries = 2 })
	ctx := context.Background()
	mods := [][]byte{echoModule(), clockRandModule(), testModule{memMin: 2}.bytes()}
	for _, m := range append(mods, mods[2]) {
		if _, err := e.Run(ctx, m, nil); err != nil {
			t.Fatalf("Run: %v", err)
		}
	}
	_, _ = e.Run(ctx, []byte("junk"), nil)
	if got := testutil.ToFloat64(e.metrics.cacheHits); got != 1 {
		t.Errorf("cache hits = %v, want 1", got)
	}
	if got := testutil.ToFloat64(e.metrics.cacheMisses); got != 4 {
		t.Errorf("cache misses = %v, want 4", got)
	}
	if n := e.modules.len(); n != 2 {
		t.Errorf("cache holds %d modules, want the bound 2", n)
	}
	if got := testutil.ToFloat64(e.metrics.runs.WithLabelValues(outcomeOK)); got != 4 {
		t.Errorf("ok runs = %v, want 4", got)
	}
	if got := testutil.ToFloat64(e.metrics.runs.WithLabelValues(outcomeInvalidModule)); got != 1 {
		t.Errorf("invalid_module runs = %v, want 1", got)
	}
	// The evicted module compiles again and still works.
	if out, err := e.Run(ctx, mods[0], []byte("x")); err != nil || string(out) != "x" {
		t.Fatalf("evicted module: %q, %v", out, err)
	}
	if n, err := testutil.GatherAndCount(reg, "jobmesh_wasm_run_duration_seconds"); err != nil || n != 1 {
		t.Errorf("duration histogram: %d series, %v", n, err)
	}
}

func TestDiskCache(t *testing.T) {
	dir := t.TempDir()
	for i := range 2 {
		e := newTestExecutor(t, func(c *Config) { c.CacheDir = dir })
		out, err := e.Run(context.Background(), echoModule(), []byte("disk"))
		if err != nil || string(out) != "disk" {
			t.Fatalf("run %d: %q, %v", i, out, err)
		}
		if err := e.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConcurrentRuns(t *testing.T) {
	e := newTestExecutor(t, func(c *Config) { c.CacheEntries = 1 })
	codes := [][]byte{echoModule(), testModule{memMin: 2, body: cat(
		[]byte{opBlock, blockEmpty, opLoop, blockEmpty},
		store(0, 16), store(4, 4096),
		i32c(0), i32c(0), i32c(1), i32c(8), call(fnFdRead), []byte{opDrop},
		load(8), []byte{opI32Eqz, opBrIf, 1},
		i32c(4), load(8), []byte{opI32Store, 2, 0},
		write(1, 0, 12),
		[]byte{opBr, 0, opEnd, opEnd},
	)}.bytes()}
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			in := []byte{byte(i)}
			out, err := e.Run(context.Background(), codes[i%2], in)
			if err == nil && !bytes.Equal(out, in) {
				err = errors.New("wrong output")
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	bad := []func(*Config){
		func(c *Config) { c.MemoryLimitBytes = 0 },
		func(c *Config) { c.MemoryLimitBytes = 5 << 30 },
		func(c *Config) { c.Timeout = 0 },
		func(c *Config) { c.MaxOutputBytes = 0 },
		func(c *Config) { c.MaxStderrBytes = -1 },
		func(c *Config) { c.MaxModuleBytes = 0 },
		func(c *Config) { c.CacheEntries = 0 },
	}
	for i, m := range bad {
		c := DefaultConfig()
		m(&c)
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("case %d: %v, want ErrInvalidConfig", i, err)
		}
		if _, err := New(c, nil); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("case %d: New accepted an invalid config", i)
		}
	}
	c := DefaultConfig()
	c.MemoryLimitBytes = PageSize + 1
	if got := c.memoryLimitPages(); got != 2 {
		t.Errorf("%d bytes round to %d pages, want 2", c.MemoryLimitBytes, got)
	}
}

func TestDeclaredMinPages(t *testing.T) {
	max := uint32(9)
	cases := []struct {
		code  []byte
		pages uint32
		ok    bool
	}{
		{testModule{memMin: 3}.bytes(), 3, true},
		{testModule{memMin: 300, memMax: &max}.bytes(), 300, true},
		{testModule{noMemory: true}.bytes(), 0, false},
		{[]byte("\x00asm\x01\x00\x00\x00\x05\xff"), 0, false},
		{nil, 0, false},
	}
	for i, tc := range cases {
		p, ok := declaredMinPages(tc.code)
		if p != tc.pages || ok != tc.ok {
			t.Errorf("case %d: (%d, %v), want (%d, %v)", i, p, ok, tc.pages, tc.ok)
		}
	}
}

// TestDiskCacheBounded: compiled code above CacheDirMaxBytes is deleted
// when an executor starts; anything else in the directory stays, and
// code within the bound is kept.
func TestDiskCacheBounded(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(other, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	compiled := func() int64 {
		t.Helper()
		var n int64
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || p == other {
				return err
			}
			info, err := d.Info()
			if err == nil {
				n += info.Size()
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	start := func(max int64) {
		t.Helper()
		e := newTestExecutor(t, func(c *Config) { c.CacheDir, c.CacheDirMaxBytes = dir, max })
		if out, err := e.Run(context.Background(), echoModule(), []byte("disk")); err != nil || string(out) != "disk" {
			t.Fatalf("run: %q, %v", out, err)
		}
		if err := e.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	start(1 << 30)
	n := compiled()
	if n == 0 {
		t.Fatal("nothing compiled on disk")
	}
	if _, err := boundCacheDir(dir, n); err != nil || compiled() != n {
		t.Fatalf("within the bound: %d bytes left of %d, %v", compiled(), n, err)
	}
	if got, err := boundCacheDir(dir, n-1); err != nil || got != n || compiled() != 0 {
		t.Fatalf("over the bound: deleted %d of %d, %d left, %v", got, n, compiled(), err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("a file that is not compiled code: %v", err)
	}
	start(1) // over any bound: deleted at start, then compiled again
	if compiled() == 0 {
		t.Fatal("nothing compiled after the restart")
	}
	bad := DefaultConfig()
	bad.CacheDirMaxBytes = -1
	if err := bad.Validate(); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("a negative bound: %v", err)
	}
}
