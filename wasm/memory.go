package wasm

import (
	"sync/atomic"

	"github.com/tetratelabs/wazero/experimental"
)

// cappedAllocator backs one run's linear memory and refuses to grow it past
// the limit. wazero's own limit (WithMemoryLimitPages) makes memory.grow fail
// silently with -1, so a module that then traps or exits would look like any
// other failure; refusing here instead lets Run report ErrMemoryLimit.
type cappedAllocator struct {
	limit uint64
	hit   atomic.Bool // a growth past limit was refused
}

func (a *cappedAllocator) Allocate(_, _ uint64) experimental.LinearMemory {
	return &cappedMemory{a: a}
}

type cappedMemory struct {
	a   *cappedAllocator
	buf []byte
}

// Reallocate grows the buffer to size bytes, or returns nil (memory.grow
// yields -1) when size is over the limit. Capacity doubles so that a module
// growing page by page does not copy its whole memory every time.
func (m *cappedMemory) Reallocate(size uint64) []byte {
	if size > m.a.limit {
		m.a.hit.Store(true)
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size]
		return m.buf
	}
	newCap := max(size, 2*uint64(cap(m.buf)))
	newCap = min(newCap, m.a.limit)
	buf := make([]byte, size, newCap)
	copy(buf, m.buf)
	m.buf = buf
	return buf
}

func (m *cappedMemory) Free() { m.buf = nil }

// declaredMinPages returns the initial size, in pages, of the memory a module
// defines itself, read from its memory section. wazero is configured with the
// 4 GiB ceiling so that growth reaches cappedAllocator; the initial size must
// therefore be checked here, before instantiation allocates it. ok is false
// when the module defines no memory or the section cannot be read (wazero's
// own validation has the last word on malformed binaries).
func declaredMinPages(code []byte) (pages uint32, ok bool) {
	const memorySectionID = 5
	if len(code) < 8 {
		return 0, false
	}
	r := code[8:] // magic and version
	for len(r) > 0 {
		id := r[0]
		size, n := uleb32(r[1:])
		if n == 0 || uint64(size) > uint64(len(r)-1-n) {
			return 0, false
		}
		body := r[1+n : 1+n+int(size)]
		r = r[1+n+int(size):]
		if id != memorySectionID {
			continue
		}
		count, n := uleb32(body)
		if n == 0 || count == 0 || len(body) <= n {
			return 0, false
		}
		body = body[n+1:] // skip the limits flag byte
		minPages, n := uleb32(body)
		if n == 0 {
			return 0, false
		}
		return minPages, true
	}
	return 0, false
}

// uleb32 decodes an unsigned LEB128 value of at most 32 bits, returning the
// number of bytes read, or 0 when malformed.
func uleb32(b []byte) (uint32, int) {
	var v uint64
	for i := 0; i < 5 && i < len(b); i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			if v > 0xffffffff {
				return 0, 0
			}
			return uint32(v), i + 1
		}
	}
	return 0, 0
}
