package wasm

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestCheck: Check accepts what the Executor runs and refuses, each with a
// message that names the fault, what fails every run.
func TestCheck(t *testing.T) {
	badVersion := echoModule()
	badVersion[4] = 2
	cases := []struct {
		name string
		code []byte
		want string // "" for accepted
	}{
		{"echo", echoModule(), ""},
		{"text", []byte("the quick brown fox\n"), "not a WebAssembly module (bad magic)"},
		{"empty", nil, "bad magic"},
		{"version 2", badVersion, "WebAssembly binary version 2, want 1"},
		{"truncated", echoModule()[:40], "section import"},
		{"no _start", testModule{memMin: 1, startName: "main"}.bytes(), "no _start export"},
		{"env import", testModule{memMin: 1, importModule: "env"}.bytes(), "imports env.fd_read, which the sandbox does not provide"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(context.Background(), tc.code)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			ce, ok := errors.AsType[*CheckError](err)
			if !errors.Is(err, ErrInvalidModule) || !ok || !strings.Contains(ce.Reason, tc.want) {
				t.Fatalf("err = %v, want a CheckError with %q", err, tc.want)
			}
		})
	}
}
