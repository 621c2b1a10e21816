package wasm

import (
	"container/list"
	"context"
	"crypto/sha256"
	"sync"

	"github.com/tetratelabs/wazero"
)

// moduleCache is a bounded LRU of compiled modules keyed by the SHA-256 of
// their code. Concurrent requests for the same code wait for one compilation.
// An evicted module is closed only once no run still uses it.
type moduleCache struct {
	mu      sync.Mutex
	max     int
	entries map[[32]byte]*cacheEntry
	lru     *list.List // of *cacheEntry, most recent at front
}

type cacheEntry struct {
	key   [32]byte
	elem  *list.Element
	ready chan struct{} // closed when compiled/err are set

	compiled wazero.CompiledModule
	err      error

	refs    int  // runs holding the module
	evicted bool // removed from the LRU; close when refs drops to 0
}

func newModuleCache(maxEntries int) *moduleCache {
	return &moduleCache{max: maxEntries, entries: make(map[[32]byte]*cacheEntry), lru: list.New()}
}

// acquire returns the compiled module for code, compiling it with compile on
// a miss, and whether it was a hit. The caller must release the entry.
func (c *moduleCache) acquire(ctx context.Context, code []byte, compile func([]byte) (wazero.CompiledModule, error)) (*cacheEntry, bool, error) {
	key := sha256.Sum256(code)
	c.mu.Lock()
	if e, ok := c.entries[key]; ok {
		e.refs++
		c.lru.MoveToFront(e.elem)
		c.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			c.release(e)
			return nil, true, ctx.Err()
		}
		if e.err != nil {
			c.release(e)
			return nil, true, e.err
		}
		return e, true, nil
	}
	e := &cacheEntry{key: key, ready: make(chan struct{}), refs: 1}
	e.elem = c.lru.PushFront(e)
	c.entries[key] = e
	c.mu.Unlock()

	e.compiled, e.err = compile(code)
	close(e.ready)

	c.mu.Lock()
	if e.err != nil {
		// Failures are not kept: the cache holds runnable modules only.
		c.removeLocked(e)
	}
	c.evictLocked()
	c.mu.Unlock()
	if e.err != nil {
		c.release(e)
		return nil, false, e.err
	}
	return e, false, nil
}

// release drops a run's hold on e, closing it if it was evicted meanwhile.
func (c *moduleCache) release(e *cacheEntry) {
	c.mu.Lock()
	e.refs--
	closeNow := e.evicted && e.refs == 0
	c.mu.Unlock()
	if closeNow && e.compiled != nil {
		_ = e.compiled.Close(context.Background())
	}
}

// evictLocked drops least recently used, compiled entries beyond max.
func (c *moduleCache) evictLocked() {
	for el := c.lru.Back(); el != nil && c.lru.Len() > c.max; {
		e := el.Value.(*cacheEntry)
		prev := el.Prev()
		select {
		case <-e.ready:
			c.removeLocked(e)
			if e.refs == 0 && e.compiled != nil {
				_ = e.compiled.Close(context.Background())
			}
		default: // still compiling; its owner will evict later
		}
		el = prev
	}
}

func (c *moduleCache) removeLocked(e *cacheEntry) {
	if e.evicted {
		return
	}
	e.evicted = true
	c.lru.Remove(e.elem)
	delete(c.entries, e.key)
}

// len reports the number of cached modules.
func (c *moduleCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
