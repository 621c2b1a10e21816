package crdt

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/jobmesh/jobmesh/internal/dsguard"
)

// dsLogger adapts slog to the go-log StandardLogger that go-ds-crdt wants.
// go-ds-crdt's Info messages are routine (repair checks, stats) and go to
// Debug so that a node's log stays about jobmesh events.
type dsLogger struct{ l *slog.Logger }

func (d dsLogger) log(level slog.Level, args ...any) {
	if d.l.Enabled(context.Background(), level) {
		d.emit(level, fmt.Sprint(args...))
	}
}

func (d dsLogger) logf(level slog.Level, format string, args ...any) {
	if d.l.Enabled(context.Background(), level) {
		d.emit(level, fmt.Sprintf(format, args...))
	}
}

// emit logs msg at level, or at Debug when it reports a shutdown, not a
// fault: a cancelled context (go-ds-crdt's own context ends only when the
// store closes; its walks' time limits end in "deadline exceeded"), or the
// guard that refuses a closed store's datastore to the walkers that
// outlive Close (dsguard.ErrClosed: "error setting dirty bit: datastore
// use after close").
func (d dsLogger) emit(level slog.Level, msg string) {
	if level > slog.LevelDebug && (strings.HasSuffix(msg, context.Canceled.Error()) || strings.HasSuffix(msg, dsguard.ErrClosed.Error())) {
		level = slog.LevelDebug
	}
	if d.l.Enabled(context.Background(), level) {
		d.l.Log(context.Background(), level, msg)
	}
}

func (d dsLogger) Debug(args ...any)                 { d.log(slog.LevelDebug, args...) }
func (d dsLogger) Debugf(format string, args ...any) { d.logf(slog.LevelDebug, format, args...) }
func (d dsLogger) Info(args ...any)                  { d.log(slog.LevelDebug, args...) }
func (d dsLogger) Infof(format string, args ...any)  { d.logf(slog.LevelDebug, format, args...) }
func (d dsLogger) Warn(args ...any)                  { d.log(slog.LevelWarn, args...) }
func (d dsLogger) Warnf(format string, args ...any)  { d.logf(slog.LevelWarn, format, args...) }
func (d dsLogger) Error(args ...any)                 { d.log(slog.LevelError, args...) }
func (d dsLogger) Errorf(format string, args ...any) { d.logf(slog.LevelError, format, args...) }

func (d dsLogger) Fatal(args ...any) {
	d.log(slog.LevelError, args...)
	os.Exit(1)
}

func (d dsLogger) Fatalf(format string, args ...any) {
	d.logf(slog.LevelError, format, args...)
	os.Exit(1)
}

func (d dsLogger) Panic(args ...any) {
	d.log(slog.LevelError, args...)
	panic(fmt.Sprint(args...))
}

func (d dsLogger) Panicf(format string, args ...any) {
	d.logf(slog.LevelError, format, args...)
	panic(fmt.Sprintf(format, args...))
}
