package wasm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// ProgramName is the only argument (argv[0]) every module sees.
const ProgramName = "jobmesh-block"

// Epoch is where a module's wall clock starts: 2000-01-01T00:00:00Z.
var Epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// clockStep is how far both clocks advance on each reading, so that code
// measuring elapsed time sees time pass without it depending on the host.
const clockStep = int64(time.Millisecond)

// Executor runs WASI command modules on one wazero runtime. It is safe for
// concurrent use; each Run gets a fresh module instance.
type Executor struct {
	cfg     Config
	log     *slog.Logger
	metrics *metrics
	runtime wazero.Runtime
	ccache  wazero.CompilationCache
	modules *moduleCache

	closing context.Context // canceled by Close to stop runs in flight
	stopAll context.CancelFunc
	mu      sync.RWMutex // held shared by runs, exclusively by Close
	closed  bool

	// beforeStart, when set (by tests), is called just before _start runs.
	beforeStart func()
}

// New builds an Executor. logger may be nil (logs are discarded).
func New(cfg Config, logger *slog.Logger) (*Executor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("wasm: register metrics: %w", err)
	}
	var ccache wazero.CompilationCache
	if cfg.CacheDir != "" {
		if n, err := boundCacheDir(cfg.CacheDir, cfg.CacheDirMaxBytes); err != nil {
			return nil, fmt.Errorf("wasm: compilation cache in %s: %w", cfg.CacheDir, err)
		} else if n > 0 {
			logger.Info("compiled code over its bound deleted", "dir", cfg.CacheDir, "bytes", n, "max", cfg.CacheDirMaxBytes)
		}
		if ccache, err = wazero.NewCompilationCacheWithDir(cfg.CacheDir); err != nil {
			return nil, fmt.Errorf("wasm: compilation cache in %s: %w", cfg.CacheDir, err)
		}
	} else {
		ccache = wazero.NewCompilationCache()
	}
	rc := wazero.NewRuntimeConfig().
		// Growth is capped by cappedAllocator, not here, so that a refused
		// growth is seen and reported as ErrMemoryLimit.
		WithMemoryLimitPages(maxPages).
		WithCloseOnContextDone(true).
		WithCompilationCache(ccache)
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		_ = ccache.Close(ctx)
		return nil, fmt.Errorf("wasm: instantiate WASI: %w", err)
	}
	closing, stopAll := context.WithCancel(context.Background())
	return &Executor{
		closing: closing,
		stopAll: stopAll,
		cfg:     cfg,
		log:     logger,
		metrics: m,
		runtime: rt,
		ccache:  ccache,
		modules: newModuleCache(cfg.CacheEntries),
	}, nil
}

// Close stops runs in flight (they fail with ErrClosed), then releases the
// runtime and every compiled module. The on-disk cache directory is left in
// place. Close is idempotent.
func (e *Executor) Close(ctx context.Context) error {
	e.stopAll()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	return errors.Join(e.runtime.Close(ctx), e.ccache.Close(ctx))
}

// Run runs code with input on stdin and returns what it wrote to stdout. See
// the package documentation for the sandbox and the errors.
func (e *Executor) Run(ctx context.Context, code, input []byte) (out []byte, err error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, ErrClosed
	}
	start := time.Now()
	defer func() {
		e.metrics.runs.WithLabelValues(outcome(err)).Inc()
		e.metrics.duration.Observe(time.Since(start).Seconds())
		if err != nil {
			e.log.Debug("wasm run failed", "err", err, "input_bytes", len(input))
		}
	}()

	entry, err := e.module(ctx, code)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, ErrInvalidModule) && !errors.Is(err, ErrMemoryLimit) {
			return nil, fmt.Errorf("%w: %w", ErrCanceled, err)
		}
		return nil, err
	}
	defer e.modules.release(entry)
	return e.instantiate(ctx, entry.compiled, input)
}

// module returns code's compiled module from the cache, compiling it on a
// miss; the caller releases it. The caller holds e.mu for reading.
func (e *Executor) module(ctx context.Context, code []byte) (*cacheEntry, error) {
	if len(code) > e.cfg.MaxModuleBytes {
		return nil, fmt.Errorf("%w: code is %d bytes, limit %d", ErrInvalidModule, len(code), e.cfg.MaxModuleBytes)
	}
	entry, hit, err := e.modules.acquire(ctx, code, e.compile)
	if hit {
		e.metrics.cacheHits.Inc()
	} else {
		e.metrics.cacheMisses.Inc()
	}
	return entry, err
}

// Prepare compiles code into the module cache without running it, with the
// checks Run makes; a later Run of the same code finds it compiled. A Run
// that starts while Prepare compiles waits for that compilation.
func (e *Executor) Prepare(ctx context.Context, code []byte) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return ErrClosed
	}
	entry, err := e.module(ctx, code)
	if err != nil {
		return err
	}
	e.modules.release(entry)
	return nil
}

// compile turns code into a runnable module and checks what wazero leaves
// to the embedder: a WASI entry point and an initial memory within the cap.
func (e *Executor) compile(code []byte) (wazero.CompiledModule, error) {
	start := time.Now()
	cm, err := e.runtime.CompileModule(context.Background(), code)
	e.log.Debug("wasm compile", "code_bytes", len(code), "took", time.Since(start), "err", err)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidModule, err)
	}
	fail := func(err error) (wazero.CompiledModule, error) {
		_ = cm.Close(context.Background())
		return nil, err
	}
	if err := checkStart(cm); err != nil {
		return fail(err)
	}
	if pages, ok := declaredMinPages(code); ok && pages > e.cfg.memoryLimitPages() {
		return fail(fmt.Errorf("%w: module declares %d pages of memory, limit %d",
			ErrMemoryLimit, pages, e.cfg.memoryLimitPages()))
	}
	return cm, nil
}

// instantiate runs one fresh instance of cm and classifies how it ended.
func (e *Executor) instantiate(ctx context.Context, cm wazero.CompiledModule, input []byte) ([]byte, error) {
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stopOnClose := context.AfterFunc(e.closing, func() { cancel(ErrClosed) })
	defer stopOnClose()
	lim := e.cfg.runLimits(ctx)
	timer := time.AfterFunc(lim.Timeout, func() { cancel(ErrTimeout) })
	defer timer.Stop()

	stdout := &cappedBuffer{limit: lim.MaxOutputBytes, onOverflow: func() { cancel(ErrOutputTooLarge) }}
	stderr := &truncatingBuffer{limit: e.cfg.MaxStderrBytes}
	alloc := &cappedAllocator{limit: lim.MemoryLimitBytes}

	wall, nano := fixedClocks()
	mc := wazero.NewModuleConfig().
		WithName(""). // anonymous: many instances of one module may run at once
		WithStartFunctions().
		WithArgs(ProgramName).
		WithStdin(bytes.NewReader(input)).
		WithStdout(stdout).
		WithStderr(stderr).
		WithWalltime(wall, 1).
		WithNanotime(nano, 1).
		WithNanosleep(func(int64) {}).
		WithOsyield(func() {}).
		WithRandSource(rand.NewChaCha8(e.cfg.RandSeed))

	mod, err := e.runtime.InstantiateModule(experimental.WithMemoryAllocator(runCtx, alloc), cm, mc)
	if err == nil {
		defer mod.Close(context.Background())
		if e.beforeStart != nil {
			e.beforeStart()
		}
		_, err = mod.ExportedFunction("_start").Call(runCtx)
		if err == nil {
			// Returning from _start is a clean exit, like proc_exit(0).
			err = sys.NewExitError(0)
		}
	} else {
		err = e.classifyInstantiate(err)
	}
	return e.classify(ctx, runCtx, err, alloc, stdout, stderr)
}

// classifyInstantiate separates linking failures from guest exits during
// instantiation (a start section may run code).
func (e *Executor) classifyInstantiate(err error) error {
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return err
	}
	return fmt.Errorf("%w: instantiate: %w", ErrInvalidModule, err)
}

// classify maps the end of a run to Run's result. Causes the executor itself
// imposed (memory refusal, output cap, timeout) take precedence over how the
// guest reacted to them; a guest that copes with a refused memory growth and
// exits 0 has succeeded.
func (e *Executor) classify(ctx, runCtx context.Context, err error, alloc *cappedAllocator, stdout *cappedBuffer, stderr *truncatingBuffer) ([]byte, error) {
	var exit *sys.ExitError
	isExit := errors.As(err, &exit)
	if isExit && exit.ExitCode() == 0 && !stdout.overflow {
		return stdout.buf.Bytes(), nil
	}
	switch {
	case stdout.overflow:
		return nil, fmt.Errorf("%w: more than %d bytes", ErrOutputTooLarge, stdout.limit)
	case alloc.hit.Load():
		return nil, withStderr(fmt.Errorf("%w: growth past %d bytes refused", ErrMemoryLimit, alloc.limit), stderr.String())
	case errors.Is(context.Cause(runCtx), ErrTimeout):
		return nil, fmt.Errorf("%w: after %v", ErrTimeout, e.cfg.runLimits(ctx).Timeout)
	case errors.Is(context.Cause(runCtx), ErrClosed):
		return nil, ErrClosed
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%w: %w", ErrCanceled, context.Cause(ctx))
	case errors.Is(err, ErrInvalidModule):
		return nil, err
	case isExit:
		return nil, &ExitError{Code: exit.ExitCode(), Stderr: stderr.String()}
	}
	return nil, withStderr(fmt.Errorf("%w: %w", ErrTrap, err), stderr.String())
}

// fixedClocks returns fresh wall and monotonic clocks for one run: they start
// at Epoch and zero and advance by clockStep on every reading, so that every
// run of the same code sees the same times.
func fixedClocks() (sys.Walltime, sys.Nanotime) {
	wall := Epoch.UnixNano() - clockStep
	nano := -clockStep
	return func() (int64, int32) {
			wall += clockStep
			return wall / 1e9, int32(wall % 1e9)
		}, func() int64 {
			nano += clockStep
			return nano
		}
}

// cappedBuffer collects stdout up to limit. On overflow it refuses the write
// and calls onOverflow, which stops the module.
type cappedBuffer struct {
	buf        bytes.Buffer
	limit      int64
	overflow   bool
	onOverflow func()
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if int64(b.buf.Len())+int64(len(p)) > b.limit {
		if !b.overflow {
			b.overflow = true
			b.onOverflow()
		}
		return 0, ErrOutputTooLarge
	}
	return b.buf.Write(p)
}

// truncatingBuffer keeps the first limit bytes written and drops the rest.
type truncatingBuffer struct {
	buf   bytes.Buffer
	limit int
}

func (b *truncatingBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (b *truncatingBuffer) String() string { return b.buf.String() }
