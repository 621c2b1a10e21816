package wasm

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// PageSize is the size of one WebAssembly memory page.
const PageSize = 64 << 10

// maxPages is the 4 GiB ceiling of a 32-bit WebAssembly memory.
const maxPages = 65536

// ErrInvalidConfig is returned by Config.Validate.
var ErrInvalidConfig = errors.New("wasm: invalid config")

// Config configures an Executor.
type Config struct {
	// MemoryLimitBytes caps a module's linear memory. It is rounded up to a
	// whole number of 64 KiB pages; at most 4 GiB. Default 256 MiB.
	MemoryLimitBytes uint64
	// Timeout caps the wall-clock time of one run (one block): instantiation
	// and execution. Compilation, done once per code and cached, is bounded by
	// MaxModuleBytes instead. Default 30 s.
	Timeout time.Duration
	// MaxOutputBytes caps what a run may write to stdout. Default 64 MiB.
	MaxOutputBytes int64
	// MaxStderrBytes is how much of a run's stderr is kept for error
	// messages; the rest is dropped. Default 4 KiB.
	MaxStderrBytes int
	// MaxModuleBytes caps the size of the code itself. Default 64 MiB.
	MaxModuleBytes int
	// CacheEntries is how many compiled modules the in-memory LRU keeps.
	// Default 32.
	CacheEntries int
	// CacheDir, when not empty, is a directory where wazero keeps compiled
	// code across restarts. Default "" (memory only).
	CacheDir string
	// CacheDirMaxBytes bounds CacheDir: when the compiled code there
	// (wazero's "wazero-*" entries; nothing else in the directory is
	// touched) is above it as the executor starts, it is deleted, to be
	// compiled again as needed. Default 1 GiB; 0: no bound.
	CacheDirMaxBytes int64
	// RandSeed keys the ChaCha8 stream that random_get reads. Every run
	// restarts the stream, so runs are reproducible. Default all zero.
	RandSeed [32]byte
	// Registerer receives the executor's Prometheus metrics. Default nil (no
	// metrics registered).
	Registerer prometheus.Registerer
}

// DefaultConfig returns the defaults documented on each Config field.
func DefaultConfig() Config {
	return Config{
		MemoryLimitBytes: 256 << 20,
		Timeout:          30 * time.Second,
		MaxOutputBytes:   64 << 20,
		MaxStderrBytes:   4 << 10,
		MaxModuleBytes:   64 << 20,
		CacheEntries:     32,
		CacheDirMaxBytes: 1 << 30,
	}
}

// Validate reports the first field out of range.
func (c Config) Validate() error {
	switch {
	case c.MemoryLimitBytes < PageSize || c.MemoryLimitBytes > maxPages*PageSize:
		return fmt.Errorf("%w: MemoryLimitBytes %d not in [64 KiB, 4 GiB]", ErrInvalidConfig, c.MemoryLimitBytes)
	case c.Timeout <= 0:
		return fmt.Errorf("%w: Timeout %v must be positive", ErrInvalidConfig, c.Timeout)
	case c.MaxOutputBytes <= 0:
		return fmt.Errorf("%w: MaxOutputBytes %d must be positive", ErrInvalidConfig, c.MaxOutputBytes)
	case c.MaxStderrBytes < 0:
		return fmt.Errorf("%w: MaxStderrBytes %d must not be negative", ErrInvalidConfig, c.MaxStderrBytes)
	case c.MaxModuleBytes <= 0:
		return fmt.Errorf("%w: MaxModuleBytes %d must be positive", ErrInvalidConfig, c.MaxModuleBytes)
	case c.CacheEntries <= 0:
		return fmt.Errorf("%w: CacheEntries %d must be positive", ErrInvalidConfig, c.CacheEntries)
	case c.CacheDirMaxBytes < 0:
		return fmt.Errorf("%w: CacheDirMaxBytes %d must not be negative", ErrInvalidConfig, c.CacheDirMaxBytes)
	}
	return nil
}

// memoryLimitPages is MemoryLimitBytes rounded up to pages.
func (c Config) memoryLimitPages() uint32 {
	return uint32((c.MemoryLimitBytes + PageSize - 1) / PageSize)
}
