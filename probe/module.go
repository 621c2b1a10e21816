package probe

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"sync"
)

// Rounds is how many rounds of the mixing function the probe module runs
// over its 32-byte input: enough that an answer cannot be guessed, far
// below a millisecond.
const Rounds = 16

// mixConst is the constant of mixing step n (0-based): the golden-ratio
// multiplier times n+1, so no two steps share one.
func mixConst(n int) uint32 { return 0x9e3779b9 * uint32(n+1) }

// Mix is the probe module's function in Go, which readers use to know the
// expected answer without running WebAssembly: the input, padded or cut
// to 32 bytes, as eight little-endian words x, then Rounds rounds of
// x[i] = rotl((x[i] + x[i+1 mod 8]) ^ k, 7) for i = 0..7, the words out
// again.
func Mix(in []byte) []byte {
	var buf [32]byte
	copy(buf[:], in)
	var x [8]uint32
	for i := range x {
		x[i] = binary.LittleEndian.Uint32(buf[4*i:])
	}
	for r := range Rounds {
		for i := range x {
			x[i] = bits.RotateLeft32((x[i]+x[(i+1)%8])^mixConst(r*8+i), 7)
		}
	}
	out := make([]byte, 32)
	for i := range x {
		binary.LittleEndian.PutUint32(out[4*i:], x[i])
	}
	return out
}

// Module returns the probe module: a WASI command that reads 32 bytes from
// stdin, runs Mix over them and writes the 32 bytes to stdout. It imports
// fd_read and fd_write only, so it runs in any executor of the mesh.
func Module() []byte {
	moduleOnce.Do(func() { module = assemble() })
	return slices.Clone(module)
}

var (
	moduleOnce sync.Once
	module     []byte
)

// WebAssembly opcodes the module uses.
const (
	opEnd      = 0x0b
	opCall     = 0x10
	opDrop     = 0x1a
	opI32Load  = 0x28
	opI32Store = 0x36
	opI32Const = 0x41
	opI32Add   = 0x6a
	opI32Xor   = 0x73
	opI32Rotl  = 0x77
	valI32     = 0x7f
)

// Memory layout: an iovec {buf, len} at 0, the byte count at 8, the 32
// bytes of data at 16.
const (
	iovAt  = 0
	nAt    = 8
	dataAt = 16
)

func assemble() []byte {
	fnType := func(params, results []byte) []byte {
		return cat([]byte{0x60}, uleb(uint64(len(params))), params, uleb(uint64(len(results))), results)
	}
	types := section(1, vec(
		fnType([]byte{valI32, valI32, valI32, valI32}, []byte{valI32}), // fd_read, fd_write
		fnType(nil, nil), // _start
	))
	imp := func(field string) []byte { return cat(name("wasi_snapshot_preview1"), name(field), []byte{0x00, 0}) }
	imports := section(2, vec(imp("fd_read"), imp("fd_write")))
	funcs := section(3, vec([]byte{1}))
	memory := section(5, vec([]byte{0x00, 1}))
	exports := section(7, vec(cat(name("_start"), []byte{0x00, 2}), cat(name("memory"), []byte{0x02, 0})))
	store := func(addr int32, val []byte) []byte { return cat(i32c(addr), val, []byte{opI32Store, 2, 0}) }
	load := func(addr int32) []byte { return cat(i32c(addr), []byte{opI32Load, 2, 0}) }
	wasi := func(fn int, fd int32) []byte {
		return cat(i32c(fd), i32c(iovAt), i32c(1), i32c(nAt), []byte{opCall, byte(fn), opDrop})
	}
	body := cat(store(iovAt, i32c(dataAt)), store(iovAt+4, i32c(32)), wasi(0, 0))
	for r := range Rounds {
		for i := range 8 {
			at, next := int32(dataAt+4*i), int32(dataAt+4*((i+1)%8))
			body = cat(body, store(at, cat(load(at), load(next), []byte{opI32Add},
				i32c(int32(mixConst(r*8+i))), []byte{opI32Xor}, i32c(7), []byte{opI32Rotl})))
		}
	}
	body = cat(body, wasi(1, 1))
	fn := cat(vec(), body, []byte{opEnd})
	code := section(10, vec(cat(uleb(uint64(len(fn))), fn)))
	return cat([]byte{0x00, 'a', 's', 'm', 1, 0, 0, 0}, types, imports, funcs, memory, exports, code)
}

func uleb(v uint64) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

func sleb(v int64) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && b&0x40 == 0) || (v == -1 && b&0x40 != 0) {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

func i32c(v int32) []byte { return append([]byte{opI32Const}, sleb(int64(v))...) }

func name(s string) []byte { return append(uleb(uint64(len(s))), s...) }

func vec(items ...[]byte) []byte { return cat(append([][]byte{uleb(uint64(len(items)))}, items...)...) }

func section(id byte, body []byte) []byte { return cat([]byte{id}, uleb(uint64(len(body))), body) }

func cat(parts ...[]byte) []byte { return slices.Concat(parts...) }
