package meshtest

import (
	"fmt"
	"strings"
	"testing"
)

func TestLineRingKeepsTheLatestLines(t *testing.T) {
	r := &lineRing{lines: make([]string, 3)}
	if got := r.String(); got != "" {
		t.Fatalf("empty ring: %q", got)
	}
	for i := 1; i <= 2; i++ {
		fmt.Fprintf(r, "line %d\n", i)
	}
	if got := r.String(); got != "line 1\nline 2" {
		t.Fatalf("before wrapping: %q", got)
	}
	for i := 3; i <= 7; i++ {
		fmt.Fprintf(r, "line %d\n", i)
	}
	if got, want := r.String(), strings.Join([]string{"line 5", "line 6", "line 7"}, "\n"); got != want {
		t.Fatalf("after wrapping: %q, want %q", got, want)
	}
}
