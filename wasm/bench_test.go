package wasm

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/examples"
)

// withCustomSection returns code with a custom section appended holding n, so
// that every n gives a distinct module hash (and thus a compile-cache miss)
// for the same behaviour.
func withCustomSection(code []byte, n uint64) []byte {
	payload := cat(name("jobmesh-bench"), binary.LittleEndian.AppendUint64(nil, n))
	return cat(code, section(0, payload))
}

// benchWarmCold alternates a run of the same module (warm compile cache) with
// a run of a never-seen variant (cold: compiled first) and reports both rates
// and their ratio from the same run.
func benchWarmCold(b *testing.B, code, input []byte) {
	cfg := DefaultConfig()
	cfg.CacheEntries = 4
	e, err := New(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(context.Background())
	ctx := context.Background()
	if _, err := e.Run(ctx, code, input); err != nil {
		b.Fatal(err)
	}
	var warm, cold time.Duration
	var n uint64
	for b.Loop() {
		t0 := time.Now()
		if _, err := e.Run(ctx, code, input); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		n++
		if _, err := e.Run(ctx, withCustomSection(code, n), input); err != nil {
			b.Fatal(err)
		}
		warm += t1.Sub(t0)
		cold += time.Since(t1)
	}
	b.ReportMetric(float64(n)/warm.Seconds(), "warm-runs/s")
	b.ReportMetric(float64(n)/cold.Seconds(), "cold-runs/s")
	b.ReportMetric(cold.Seconds()/warm.Seconds(), "warm/cold-speedup")
}

// BenchmarkCompileCacheTrivial: the hand-assembled echo module (a few
// hundred bytes).
func BenchmarkCompileCacheTrivial(b *testing.B) {
	benchWarmCold(b, echoModule(), []byte("block"))
}

// BenchmarkCompileCacheGo: the wordcount example, a Go wasip1 module of about
// 2 MB, where compilation dominates a cold run.
func BenchmarkCompileCacheGo(b *testing.B) {
	code, err := examples.Build(context.Background(), "wordcount")
	if err != nil {
		b.Fatal(err)
	}
	benchWarmCold(b, code, []byte("the quick brown fox jumps over the lazy dog"))
}

// BenchmarkDiskCacheGo measures a processor restart: a fresh executor runs
// the wordcount module once, with wazero's on-disk cache already holding its
// machine code versus with no disk cache. Both rates come from the same run.
func BenchmarkDiskCacheGo(b *testing.B) {
	ctx := context.Background()
	code, err := examples.Build(ctx, "wordcount")
	if err != nil {
		b.Fatal(err)
	}
	input := []byte("the quick brown fox")
	dir := b.TempDir()
	once := func(cacheDir string) time.Duration {
		cfg := DefaultConfig()
		cfg.CacheDir = cacheDir
		t0 := time.Now()
		e, err := New(cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.Run(ctx, code, input); err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		_ = e.Close(ctx)
		return d
	}
	once(dir) // fill the disk cache
	var withDisk, without time.Duration
	var n int
	for b.Loop() {
		withDisk += once(dir)
		without += once("")
		n++
	}
	b.ReportMetric(float64(n)/withDisk.Seconds(), "disk-cached-starts/s")
	b.ReportMetric(float64(n)/without.Seconds(), "uncached-starts/s")
	b.ReportMetric(without.Seconds()/withDisk.Seconds(), "disk-cache-speedup")
}
