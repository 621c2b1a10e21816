package crdt

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/jobmesh/jobmesh/internal/dsguard"
)

// go-ds-crdt's errors reach the node's log, except those of a walk its
// closing store cancelled or refused its datastore, which go to Debug.
func TestDSLoggerQuietsCancelledWalks(t *testing.T) {
	var buf bytes.Buffer
	d := dsLogger{l: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	d.Errorf("error getting delta: %s", "context canceled")
	d.Warn("error getting delta: context canceled")
	d.Errorf("error setting dirty bit: %s", dsguard.ErrClosed)
	if buf.Len() != 0 {
		t.Errorf("a cancelled walk, or one refused the closed store's datastore, was logged above Debug: %s", buf.String())
	}
	d.Errorf("error getting delta: %s", "context deadline exceeded")
	d.Infof("repair check")
	out := buf.String()
	if !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "context deadline exceeded") {
		t.Errorf("a walk that ran out of time was not logged as an error: %q", out)
	}
	if strings.Contains(out, "repair check") {
		t.Errorf("go-ds-crdt's Info reached Info: %q", out)
	}
}
