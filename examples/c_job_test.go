package examples

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/jobmesh/jobmesh/wasm"
)

// TestCJob builds c/upper.c, a job written in C, with the command the README gives and checks
// that the module passes job submit's check and upper-cases a block like
// tr a-z A-Z. It needs clang with wasi-libc; without them it is skipped
// unless JOBMESH_REQUIRE_WASI_CLANG=1.
func TestCJob(t *testing.T) {
	out := filepath.Join(t.TempDir(), "upper.wasm")
	cmd := exec.Command("clang", "--target=wasm32-wasi", "-O2", "-s", "-o", out, filepath.Join("c", "upper.c"))
	if b, err := cmd.CombinedOutput(); err != nil {
		if os.Getenv("JOBMESH_REQUIRE_WASI_CLANG") == "1" {
			t.Fatalf("clang: %v\n%s", err, b)
		}
		t.Skipf("no clang for wasm32-wasi with wasi-libc here: %v\n%s", err, b)
	}
	code, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := wasm.Check(ctx, code); err != nil {
		t.Fatalf("job submit would refuse the module: %v", err)
	}
	e, err := wasm.New(wasm.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	block := bytes.Repeat([]byte("The quick brown fox, 42 times; Über straße.\n"), 3000) // over its 64 KiB buffer
	got, err := e.Run(ctx, code, block)
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, block)
	if !bytes.Equal(got, want) {
		t.Fatalf("upper.wasm wrote %.80q..., want %.80q...", got, want)
	}
}
