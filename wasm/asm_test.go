package wasm

// A tiny WebAssembly assembler for test modules: enough to write hostile and
// trivial WASI commands as byte slices without an external toolchain.

// Opcodes used by the test modules.
const (
	opUnreachable = 0x00
	opBlock       = 0x02
	opLoop        = 0x03
	opIf          = 0x04
	opEnd         = 0x0b
	opBr          = 0x0c
	opBrIf        = 0x0d
	opCall        = 0x10
	opDrop        = 0x1a
	opI32Load     = 0x28
	opI32Store    = 0x36
	opMemoryGrow  = 0x40
	opI32Const    = 0x41
	opI64Const    = 0x42
	opI32Eqz      = 0x45
	opI32Eq       = 0x46
	opI32Ne       = 0x47
	opI32DivU     = 0x6e
	blockEmpty    = 0x40
	valI32        = 0x7f
	valI64        = 0x7e
)

// Indices of the WASI imports every test module declares, in order.
const (
	fnFdRead = iota
	fnFdWrite
	fnProcExit
	fnClockTimeGet
	fnRandomGet
	fnStart // the module's own _start
)

type testModule struct {
	memMin   uint32
	memMax   *uint32
	noMemory bool
	// importModule replaces "wasi_snapshot_preview1" for the first import,
	// to make a module that cannot link.
	importModule string
	// startName replaces "_start" in the export section.
	startName string
	body      []byte
}

func uleb(v uint64) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			out = append(out, b|0x80)
			continue
		}
		return append(out, b)
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

func name(s string) []byte { return append(uleb(uint64(len(s))), s...) }

func vec(items ...[]byte) []byte {
	out := uleb(uint64(len(items)))
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

func section(id byte, body []byte) []byte {
	return append(append([]byte{id}, uleb(uint64(len(body)))...), body...)
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// Instruction helpers.
func i32c(v int32) []byte          { return append([]byte{opI32Const}, sleb(int64(v))...) }
func i64c(v int64) []byte          { return append([]byte{opI64Const}, sleb(v)...) }
func call(fn int) []byte           { return append([]byte{opCall}, uleb(uint64(fn))...) }
func store(addr, val int32) []byte { return cat(i32c(addr), i32c(val), []byte{opI32Store, 2, 0}) }
func load(addr int32) []byte       { return cat(i32c(addr), []byte{opI32Load, 2, 0}) }
func write(fd, iov, nw int32) []byte {
	return cat(i32c(fd), i32c(iov), i32c(1), i32c(nw), call(fnFdWrite), []byte{opDrop})
}

func (m testModule) bytes() []byte {
	fn := func(params, results []byte) []byte {
		return cat([]byte{0x60}, vec(bytesOf(params)...), vec(bytesOf(results)...))
	}
	types := section(1, vec(
		fn([]byte{valI32, valI32, valI32, valI32}, []byte{valI32}), // 0 fd_read, fd_write
		fn([]byte{valI32}, nil),                            // 1 proc_exit
		fn([]byte{valI32, valI64, valI32}, []byte{valI32}), // 2 clock_time_get
		fn([]byte{valI32, valI32}, []byte{valI32}),         // 3 random_get
		fn(nil, nil), // 4 _start
	))
	first := "wasi_snapshot_preview1"
	if m.importModule != "" {
		first = m.importModule
	}
	imp := func(mod, field string, typ byte) []byte { return cat(name(mod), name(field), []byte{0x00, typ}) }
	imports := section(2, vec(
		imp(first, "fd_read", 0),
		imp("wasi_snapshot_preview1", "fd_write", 0),
		imp("wasi_snapshot_preview1", "proc_exit", 1),
		imp("wasi_snapshot_preview1", "clock_time_get", 2),
		imp("wasi_snapshot_preview1", "random_get", 3),
	))
	funcs := section(3, vec([]byte{4}))
	start := "_start"
	if m.startName != "" {
		start = m.startName
	}
	exports := [][]byte{cat(name(start), []byte{0x00}, uleb(fnStart))}
	var memory []byte
	if !m.noMemory {
		limits := cat([]byte{0x00}, uleb(uint64(m.memMin)))
		if m.memMax != nil {
			limits = cat([]byte{0x01}, uleb(uint64(m.memMin)), uleb(uint64(*m.memMax)))
		}
		memory = section(5, vec(limits))
		exports = append(exports, cat(name("memory"), []byte{0x02, 0x00}))
	}
	// One local declaration: two i32 locals, unused by most bodies.
	body := cat(vec([]byte{2, valI32}), m.body, []byte{opEnd})
	code := section(10, vec(cat(uleb(uint64(len(body))), body)))
	return cat([]byte{0x00, 'a', 's', 'm', 1, 0, 0, 0}, types, imports, funcs, memory, section(7, vec(exports...)), code)
}

func bytesOf(b []byte) [][]byte {
	out := make([][]byte, len(b))
	for i := range b {
		out[i] = []byte{b[i]}
	}
	return out
}

// echoModule copies stdin to stdout.
func echoModule() []byte {
	return testModule{memMin: 1, body: cat(
		[]byte{opBlock, blockEmpty, opLoop, blockEmpty},
		store(0, 16), store(4, 4096),
		i32c(0), i32c(0), i32c(1), i32c(8), call(fnFdRead), []byte{opDrop},
		load(8), []byte{opI32Eqz, opBrIf, 1},
		i32c(4), load(8), []byte{opI32Store, 2, 0},
		write(1, 0, 12),
		[]byte{opBr, 0, opEnd, opEnd},
	)}.bytes()
}

// clockRandModule writes two wall-clock readings, one monotonic reading and
// 32 random bytes to stdout (56 bytes).
func clockRandModule() []byte {
	return testModule{memMin: 1, body: cat(
		i32c(0), i64c(1), i32c(0), call(fnClockTimeGet), []byte{opDrop},
		i32c(1), i64c(1), i32c(8), call(fnClockTimeGet), []byte{opDrop},
		i32c(0), i64c(1), i32c(16), call(fnClockTimeGet), []byte{opDrop},
		i32c(24), i32c(32), call(fnRandomGet), []byte{opDrop},
		store(100, 0), store(104, 56),
		write(1, 100, 108),
	)}.bytes()
}
