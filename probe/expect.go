package probe

import "sync"

// Expectations caches Expected per (window, challenger), so a reader
// computes each probe's answer once however often it reads the probe.
// Safe for concurrent use; the zero value is ready.
type Expectations struct {
	mu sync.Mutex
	m  map[expectKey][32]byte
}

type expectKey struct {
	w uint64
	p string
}

// Get returns Expected(w, p), computed on first use.
func (e *Expectations) Get(w uint64, p string) [32]byte {
	if e == nil {
		return Expected(w, p)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	k := expectKey{w, p}
	if h, ok := e.m[k]; ok {
		return h
	}
	if e.m == nil {
		e.m = map[expectKey][32]byte{}
	}
	h := Expected(w, p)
	e.m[k] = h
	return h
}

// Prune forgets the windows before w.
func (e *Expectations) Prune(w uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k := range e.m {
		if k.w < w {
			delete(e.m, k)
		}
	}
}
