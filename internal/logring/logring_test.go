package logring

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestRingKeepsLatestWarnings(t *testing.T) {
	var out bytes.Buffer
	r := New(3)
	log := slog.New(r.Handler(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelError})))
	sub := log.With("subsystem", "p").WithGroup("g").With("k", 1)
	log.Info("not kept")
	sub.Warn("first", "n", 1)
	log.Error("second", slog.Group("job", "id", "ab"))
	log.Warn("third", "long", strings.Repeat("x", 2*MaxText))
	log.Warn("fourth")
	got := r.Records()
	if len(got) != 3 || got[0].Message != "second" || got[1].Message != "third" || got[2].Message != "fourth" {
		t.Fatalf("records %+v", got)
	}
	if got[0].Level != "ERROR" || got[0].Attrs["job.id"] != "ab" {
		t.Errorf("second: %+v", got[0])
	}
	if v := got[1].Attrs["long"]; len(v) > MaxText+len("…") {
		t.Errorf("an attribute of %d bytes kept", len(v))
	}
	// The next handler sees what its level allows, unchanged.
	if s := out.String(); strings.Contains(s, "first") || strings.Contains(s, "not kept") || !strings.Contains(s, "second") {
		t.Errorf("the next handler wrote %q", s)
	}

	r = New(2)
	log = slog.New(r.Handler(slog.NewTextHandler(&out, nil)))
	log.With("subsystem", "p").WithGroup("g").With("k", 1).Warn("grouped", "n", 2)
	got = r.Records()
	if len(got) != 1 || got[0].Attrs["subsystem"] != "p" || got[0].Attrs["g.k"] != "1" || got[0].Attrs["g.n"] != "2" {
		t.Fatalf("grouped: %+v", got)
	}
}
