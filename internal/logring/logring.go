// Package logring keeps a node's most recent warnings: a slog handler
// that passes every record on to another handler and copies those at
// WARN and above into a ring of fixed size, for the node's operator view.
package logring

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// MaxText bounds the message and each attribute value kept of a record.
const MaxText = 512

// Record is one kept log record.
type Record struct {
	Time    time.Time         `json:"time"`
	Level   string            `json:"level"`
	Message string            `json:"message"`
	Attrs   map[string]string `json:"attrs,omitempty"`
}

// Ring holds the latest records at MinLevel and above.
type Ring struct {
	mu   sync.Mutex
	buf  []Record
	next int  // where the next record goes
	full bool // buf has wrapped
}

// MinLevel is the lowest level a Ring keeps.
const MinLevel = slog.LevelWarn

// New returns a ring of size records (at least 1).
func New(size int) *Ring { return &Ring{buf: make([]Record, max(1, size))} }

func (r *Ring) add(rec Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf[r.next] = rec
	r.next = (r.next + 1) % len(r.buf)
	r.full = r.full || r.next == 0
}

// Records returns the kept records, oldest first.
func (r *Ring) Records() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return append([]Record(nil), r.buf[:r.next]...)
	}
	return append(append([]Record(nil), r.buf[r.next:]...), r.buf[:r.next]...)
}

// Handler returns a handler that passes every record to next and keeps
// those at MinLevel and above in r.
func (r *Ring) Handler(next slog.Handler) slog.Handler { return &handler{ring: r, next: next} }

type handler struct {
	ring   *Ring
	next   slog.Handler
	attrs  []slog.Attr // from WithAttrs, their keys qualified by the groups then open
	groups string      // "a.b." for WithGroup("a").WithGroup("b")
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= MinLevel || h.next.Enabled(ctx, l)
}

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Level >= MinLevel {
		kept := Record{Time: rec.Time, Level: rec.Level.String(), Message: clip(rec.Message), Attrs: map[string]string{}}
		for _, a := range h.attrs {
			addAttr(kept.Attrs, "", a)
		}
		rec.Attrs(func(a slog.Attr) bool {
			addAttr(kept.Attrs, h.groups, a)
			return true
		})
		h.ring.add(kept)
	}
	if !h.next.Enabled(ctx, rec.Level) {
		return nil
	}
	return h.next.Handle(ctx, rec)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]slog.Attr(nil), h.attrs...)
	for _, a := range as {
		c.attrs = append(c.attrs, slog.Attr{Key: h.groups + a.Key, Value: a.Value})
	}
	c.next = h.next.WithAttrs(as)
	return &c
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.groups = h.groups + name + "."
	c.next = h.next.WithGroup(name)
	return &c
}

// addAttr flattens a into m, group members as "group.key".
func addAttr(m map[string]string, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range v.Group() {
			addAttr(m, p, g)
		}
		return
	}
	if a.Key == "" {
		return
	}
	m[clip(prefix+a.Key)] = clip(v.String())
}

func clip(s string) string {
	if len(s) <= MaxText {
		return s
	}
	return strings.ToValidUTF8(s[:MaxText], "") + "…"
}
