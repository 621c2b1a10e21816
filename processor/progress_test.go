package processor

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/jobs"
)

// TestProgressBatchOncePerWindow: the first completion goes out at once;
// those within the window wait for one flush at its end; a full message
// goes out at once; a flush after add sent everything sends nothing.
func TestProgressBatchOncePerWindow(t *testing.T) {
	const window = time.Second
	t0 := time.Unix(1000, 0)
	b := windowBatch{full: jobs.MaxProgressMicros}
	due, _, schedule := b.add([]string{"a", "b"}, t0, window)
	if !slices.Equal(due, []string{"a", "b"}) || schedule {
		t.Fatalf("first turn: due %v, schedule %v; want a, b at once", due, schedule)
	}
	due, wait, schedule := b.add([]string{"c"}, t0.Add(200*time.Millisecond), window)
	if due != nil || !schedule || wait != 800*time.Millisecond {
		t.Fatalf("within the window: due %v, wait %s, schedule %v; want a flush in 800ms", due, wait, schedule)
	}
	due, _, schedule = b.add([]string{"d"}, t0.Add(500*time.Millisecond), window)
	if due != nil || schedule {
		t.Fatalf("a flush is scheduled already: due %v, schedule %v", due, schedule)
	}
	if got := b.flush(t0.Add(window)); !slices.Equal(got, []string{"c", "d"}) {
		t.Fatalf("flush: %v, want c, d", got)
	}

	// A full message does not wait.
	full := make([]string, jobs.MaxProgressMicros)
	for i := range full {
		full[i] = fmt.Sprint(i)
	}
	if due, _, _ := b.add(full, t0.Add(window+time.Millisecond), window); len(due) != jobs.MaxProgressMicros {
		t.Fatalf("a full message: %d due, want %d", len(due), jobs.MaxProgressMicros)
	}
	// Scheduled, then sent by a later add past the window: the flush has
	// nothing left.
	t1 := t0.Add(window + time.Millisecond)
	if _, _, schedule := b.add([]string{"e"}, t1.Add(time.Millisecond), window); !schedule {
		t.Fatal("no flush scheduled")
	}
	if due, _, _ := b.add([]string{"f"}, t1.Add(window), window); !slices.Equal(due, []string{"e", "f"}) {
		t.Fatalf("past the window: due %v, want e, f", due)
	}
	if got := b.flush(t1.Add(window)); got != nil {
		t.Fatalf("flush after all was sent: %v", got)
	}
	// A window of 0 says every turn at once.
	var z windowBatch
	for i := range 3 {
		if due, _, schedule := z.add([]string{"x"}, t0.Add(time.Duration(i)), 0); len(due) != 1 || schedule {
			t.Fatalf("window 0, turn %d: due %v, schedule %v", i, due, schedule)
		}
	}
}

// TestAnswersOncePerWindow: requests for rooms from many peers, each
// asking many times within a window, get one answer at once and one at
// the window's end; what waits is each asker once, and however many ask,
// nothing goes out before the window's end.
func TestAnswersOncePerWindow(t *testing.T) {
	const window = time.Second
	t0 := time.Unix(1000, 0)
	b := windowBatch{once: true}
	if due, _, _ := b.add([]string{"p1"}, t0, window); !slices.Equal(due, []string{"p1"}) {
		t.Fatalf("first request: due %v, want an answer at once", due)
	}
	scheduled := 0
	for i := range 200 {
		due, _, schedule := b.add([]string{fmt.Sprint("p", i%100)}, t0.Add(time.Duration(i)*time.Millisecond), window)
		if due != nil {
			t.Fatalf("request %d within the window answered at once: %v", i, due)
		}
		if schedule {
			scheduled++
		}
	}
	if scheduled != 1 || len(b.pending) != 100 {
		t.Fatalf("%d flushes scheduled, %d askers pending; want 1 and 100", scheduled, len(b.pending))
	}
	if got := b.flush(t0.Add(window)); len(got) != 100 {
		t.Fatalf("the window's end answers %d askers, want 100", len(got))
	}
}

func TestProgressWindowValidated(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Wallet = "0x00000000000000000000000000000000000000a1"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, w := range []time.Duration{-time.Second, cfg.DiscloseGrace + time.Second} {
		c := cfg
		c.ProgressWindow = w
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("progress window %s: %v, want ErrInvalidConfig", w, err)
		}
	}
}
