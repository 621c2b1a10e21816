package examples

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// ErrBuild is returned when an example cannot be compiled.
var ErrBuild = errors.New("examples: build failed")

// Names lists the examples Build knows.
var Names = []string{"mandelbrot", "wordcount"}

// buildFlags make the module small (faster to compile in wazero) and free of
// local paths (the same bytes on every machine with the same Go release).
var buildFlags = []string{"-trimpath", "-ldflags=-s -w"}

var (
	buildMu    sync.Mutex
	buildCache = map[string]*buildResult{}
)

type buildResult struct {
	done chan struct{}
	wasm []byte
	err  error
}

// Build compiles the named example for GOOS=wasip1 GOARCH=wasm and returns the
// module. Results are cached for the life of the process; concurrent callers
// for one name share one build. It needs the go command on PATH.
func Build(ctx context.Context, name string) ([]byte, error) {
	dir, err := Dir(name)
	if err != nil {
		return nil, err
	}
	return BuildDir(ctx, dir)
}

// BuildDir compiles the main package in dir like Build.
func BuildDir(ctx context.Context, dir string) ([]byte, error) {
	buildMu.Lock()
	r, ok := buildCache[dir]
	if !ok {
		r = &buildResult{done: make(chan struct{})}
		buildCache[dir] = r
	}
	buildMu.Unlock()
	if !ok {
		r.wasm, r.err = goBuild(ctx, dir)
		if r.err != nil {
			// Do not keep failures: a later call may have a live context.
			buildMu.Lock()
			delete(buildCache, dir)
			buildMu.Unlock()
		}
		close(r.done)
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", ErrBuild, ctx.Err())
	}
	if r.err != nil {
		return nil, r.err
	}
	return bytes.Clone(r.wasm), nil
}

// Dir returns the source directory of the named example.
func Dir(name string) (string, error) {
	known := false
	for _, n := range Names {
		known = known || n == name
	}
	if !known {
		return "", fmt.Errorf("%w: unknown example %q (have %s)", ErrBuild, name, strings.Join(Names, ", "))
	}
	// This file's own path, unless the binary was built with -trimpath.
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir := filepath.Join(filepath.Dir(file), name)
		if _, err := os.Stat(dir); err == nil {
			return dir, nil
		}
	}
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "github.com/jobmesh/jobmesh/examples/"+name).Output()
	if err != nil {
		return "", fmt.Errorf("%w: locate %s: %w", ErrBuild, name, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func goBuild(ctx context.Context, dir string) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "jobmesh-example-")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBuild, err)
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "job.wasm")
	args := append([]string{"build"}, buildFlags...)
	args = append(args, "-o", out, ".")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	// GOFLAGS is cleared so that flags meant for the host build (-race,
	// -cover) do not reach a wasm build that cannot take them.
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w: go build in %s: %w: %s", ErrBuild, dir, err, msg)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBuild, err)
	}
	return wasm, nil
}
