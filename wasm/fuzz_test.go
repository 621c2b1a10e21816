package wasm

import (
	"context"
	"errors"
	"testing"
	"time"
)

// FuzzRun feeds arbitrary bytes as a module: Run must return an error (or,
// for the rare valid module, run it within the caps), never panic.
func FuzzRun(f *testing.F) {
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	f.Add(echoModule())
	f.Add(clockRandModule())
	f.Add(testModule{memMin: 65536}.bytes())
	f.Add(echoModule()[:30])
	cfg := DefaultConfig()
	cfg.MemoryLimitBytes = 1 << 20
	cfg.Timeout = 100 * time.Millisecond
	cfg.MaxOutputBytes = 1 << 10
	cfg.CacheEntries = 4
	e, err := New(cfg, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = e.Close(context.Background()) })
	f.Fuzz(func(t *testing.T, code []byte) {
		_, err := e.Run(context.Background(), code, []byte("x"))
		if err != nil && outcome(err) == outcomeOther {
			t.Fatalf("unclassified error: %v", err)
		}
		if err != nil && errors.Is(err, ErrClosed) {
			t.Fatalf("executor closed itself: %v", err)
		}
		declaredMinPages(code) // must not panic either
	})
}
