package wasm

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestTrapCarriesStderr: what a module wrote to stderr before it trapped
// comes back with the trap (Stderr), as an exit's does; a trap with
// nothing on stderr has none.
func TestTrapCarriesStderr(t *testing.T) {
	e := newTestExecutor(t, nil)
	code := testModule{memMin: 1, body: cat(
		store(0, 0x6d6f6f62), // "boom"
		store(16, 0), store(20, 4), write(2, 16, 24),
		[]byte{opUnreachable},
	)}.bytes()
	_, err := e.Run(context.Background(), code, nil)
	if !errors.Is(err, ErrTrap) || Stderr(err) != "boom" || !strings.Contains(err.Error(), `stderr: "boom"`) {
		t.Fatalf("err = %v (stderr %q), want a trap with stderr boom", err, Stderr(err))
	}
	_, err = e.Run(context.Background(), testModule{memMin: 1, body: []byte{opUnreachable}}.bytes(), nil)
	if !errors.Is(err, ErrTrap) || Stderr(err) != "" {
		t.Fatalf("err = %v (stderr %q), want a trap without stderr", err, Stderr(err))
	}
	if Stderr(&ExitError{Code: 1, Stderr: "x"}) != "x" || Stderr(ErrTimeout) != "" {
		t.Fatal("Stderr of an exit or a timeout")
	}
}
