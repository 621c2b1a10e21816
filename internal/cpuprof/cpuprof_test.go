package cpuprof

import (
	"context"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/internal/cputime"
)

// A goroutine started under a label is counted under it, and goroutines
// it starts inherit the label.
func TestProfileSplitsByLabel(t *testing.T) {
	if cputime.Process() < 0 {
		t.Skip("CPU time is not readable on this platform")
	}
	p, err := Start("part")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int)
	pprof.Do(context.Background(), pprof.Labels("part", "busy"), func(context.Context) {
		go func() { // inherits the label
			x, start := 0, cputime.Process()
			for cputime.Process()-start < 300*time.Millisecond {
				for i := range 1_000_000 {
					x ^= i
				}
			}
			done <- x
		}()
	})
	<-done
	by, err := p.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if by["busy"] < 100*time.Millisecond || by["busy"] < by[""] {
		t.Fatalf("the busy part spent %v, the rest %v", by["busy"], by[""])
	}
	if len(by) > 2 {
		t.Fatalf("labels %v, want busy and the unlabelled rest", by)
	}
}
