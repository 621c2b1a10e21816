// Package peertext converts libp2p peer IDs to and from their canonical
// text, remembering the ones it has seen. Every record names its author,
// and most of its keys a peer: a base58 encode or decode per record read
// was a few percent of a busy node's CPU, for the few hundred peers a mesh
// has.
package peertext

import (
	"sync"

	"github.com/libp2p/go-libp2p/core/peer"
)

// limit bounds each cache; a cache that reaches it is emptied, so that
// texts naming ever new peers cost at most a conversion each, never
// unbounded memory.
const limit = 4096

var (
	texts     = cache[peer.ID, string]{m: map[peer.ID]string{}}
	canonical = cache[string, struct{}]{m: map[string]struct{}{}}
)

// Of returns id.String().
func Of(id peer.ID) string {
	if s, ok := texts.get(id); ok {
		return s
	}
	s := id.String()
	texts.put(id, s)
	return s
}

// Canonical reports whether s is the canonical text of a peer ID (it
// decodes, and encodes back to s); a non-nil error says why not.
func Canonical(s string) (bool, error) {
	if _, ok := canonical.get(s); ok {
		return true, nil
	}
	id, err := peer.Decode(s)
	if err != nil {
		return false, err
	}
	if Of(id) != s {
		return false, nil
	}
	canonical.put(s, struct{}{})
	return true, nil
}

type cache[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
}

func (c *cache[K, V]) get(k K) (V, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *cache[K, V]) put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= limit {
		clear(c.m)
	}
	c.m[k] = v
}
