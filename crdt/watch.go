package crdt

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/ipfs/go-datastore"
)

// ChangeKind says what happened to a key.
type ChangeKind uint8

const (
	// ChangePut: Record is the key's new, verified value.
	ChangePut ChangeKind = iota + 1
	// ChangeDelete: the key was deleted. Record is the signed tombstone,
	// or zero when go-ds-crdt removed the value without one.
	ChangeDelete
	// ChangeOverflow: the watcher fell behind and changes after this point
	// were dropped; call Query on the prefix to resync. Key and Record are
	// zero.
	ChangeOverflow
)

func (k ChangeKind) String() string {
	switch k {
	case ChangePut:
		return "put"
	case ChangeDelete:
		return "delete"
	case ChangeOverflow:
		return "overflow"
	}
	return "unknown"
}

// Change is one event delivered by Watch.
type Change struct {
	Kind   ChangeKind
	Key    string
	Record Record
}

// watcher is one Watch subscription.
type watcher struct {
	prefix string // cleaned; "/" matches every key

	mu         sync.Mutex
	ch         chan Change
	closed     bool
	overflowed bool
}

func (w *watcher) matches(key string) bool {
	if w.prefix == "/" {
		return true
	}
	return key == w.prefix || strings.HasPrefix(key, w.prefix+"/")
}

// offer delivers c without ever blocking. The last buffer slot is kept for
// an overflow marker: when only it is free, c is dropped and the marker is
// queued once; delivery resumes when the watcher has drained its buffer.
func (w *watcher) offer(c Change) (dropped bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	if len(w.ch) < cap(w.ch)-1 {
		w.ch <- c
		w.overflowed = false
		return false
	}
	if !w.overflowed {
		w.ch <- Change{Kind: ChangeOverflow}
		w.overflowed = true
	}
	return true
}

func (w *watcher) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.ch)
	}
}

// Watch returns a channel of changes to keys under prefix (same path
// semantics as Query), from local writes and from other replicas, each
// record verified; rejected records are counted and not delivered. Watch
// never slows the store: when the buffer (Config.WatchBuffer) is full,
// changes are dropped and one ChangeOverflow is queued, after which the
// consumer should Query the prefix. Only changes after the call are seen.
// The channel is closed when ctx ends or the store closes.
func (s *Store) Watch(ctx context.Context, prefix string) <-chan Change {
	w := &watcher{prefix: cleanPrefix(prefix), ch: make(chan Change, s.cfg.WatchBuffer)}
	s.watchMu.Lock()
	if s.closed() {
		s.watchMu.Unlock()
		close(w.ch)
		return w.ch
	}
	s.watchers[w] = struct{}{}
	s.watchMu.Unlock()
	go func() {
		select {
		case <-ctx.Done():
		case <-s.done:
		}
		s.watchMu.Lock()
		delete(s.watchers, w)
		s.watchMu.Unlock()
		w.close()
	}()
	return w.ch
}

func (s *Store) closeWatchers() {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	for w := range s.watchers {
		w.close()
		delete(s.watchers, w)
	}
}

// dispatch offers c to every matching watcher.
func (s *Store) dispatch(c Change) {
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	for w := range s.watchers {
		if w.matches(c.Key) && w.offer(c) {
			s.m.dropped.Inc()
		}
	}
}

// putHook runs inside go-ds-crdt each time a key takes a new value, local or
// remote. The value is verified here too, so bad records are counted as
// they arrive, not only when someone reads them.
func (s *Store) putHook(k datastore.Key, v []byte) {
	key := k.String()
	r, err := s.open(key, v)
	if err != nil {
		return
	}
	if s.carries(r.Type) && !r.Tombstone {
		s.takeCarried(key, r)
	}
	if c, _, ok := s.carriedRecord(context.Background(), key); ok && c.Seq > r.Seq {
		r = c // a newer copy came carried: readers see that one
	}
	if r.Tombstone {
		s.dispatch(Change{Kind: ChangeDelete, Key: key, Record: r})
		return
	}
	s.dispatch(Change{Kind: ChangePut, Key: key, Record: r})
}

// deleteHook runs when go-ds-crdt tombstones a value. Another value may
// still stand under the key, so the key is read back to report its state.
func (s *Store) deleteHook(k datastore.Key) {
	key := k.String()
	r, err := s.Get(context.Background(), key)
	switch {
	case err == nil:
		s.dispatch(Change{Kind: ChangePut, Key: key, Record: r})
	case errors.Is(err, ErrNotFound):
		s.dispatch(Change{Kind: ChangeDelete, Key: key})
	}
}
