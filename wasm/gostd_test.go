package wasm

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobmesh/jobmesh/examples"
)

// TestGoProgramDeterministic runs a Go program that reads the clock, both
// random sources, its environment and the file system, through the Go
// runtime's own WASI calls, and expects the same output on every run.
func TestGoProgramDeterministic(t *testing.T) {
	ctx := context.Background()
	dir, err := filepath.Abs(filepath.Join("testdata", "clockrand"))
	if err != nil {
		t.Fatal(err)
	}
	code, err := examples.BuildDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	e := newTestExecutor(t, func(c *Config) { c.MemoryLimitBytes = 64 << 20; c.Timeout = 30e9 })
	first, err := e.Run(ctx, code, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := e.Run(ctx, code, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Fatalf("runs differ:\n%s\n%s", first, second)
	}
	out := string(first)
	t.Logf("sandbox view:\n%s", out)
	for _, want := range []string{"now=2000-01-01T00:00:00", `args=["jobmesh-block"] env=[]`, "file=true"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}
