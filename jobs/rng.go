package jobs

import (
	"crypto/sha256"
	"encoding/binary"
)

// Domain tags keep the hashes of different derivations apart. Each is 16
// ASCII bytes, hashed without a length prefix.
const (
	tagSlice = "jobmesh/slice/v1"
	tagMicro = "jobmesh/micro/v1"
	tagMacro = "jobmesh/macro/v1"
)

// Stream is the slicing RNG of one MacroJob: SHA-256 in counter mode.
//
//	block(c) = SHA256("jobmesh/slice/v1" ‖ seed ‖ uint64be(macroIndex) ‖ uint64be(c)), c = 0, 1, ...
//
// The stream is block(0) ‖ block(1) ‖ ...; Uint64 reads its next 8 bytes as
// a big-endian integer. It is specified byte for byte so that any other
// implementation (or a contract) recomputes the same slicing; math/rand
// gives no such promise.
type Stream struct {
	prefix  [16 + 32 + 8]byte // tag ‖ seed ‖ uint64be(macroIndex)
	counter uint64
	buf     [32]byte
	off     int // next unread byte in buf; len(buf) when empty
}

// NewStream returns the stream for seed and MacroJob index.
func NewStream(seed Seed, macroIndex uint64) *Stream {
	s := &Stream{off: 32}
	copy(s.prefix[:16], tagSlice)
	copy(s.prefix[16:48], seed[:])
	binary.BigEndian.PutUint64(s.prefix[48:], macroIndex)
	return s
}

// Uint64 returns the next 8 stream bytes as a big-endian integer.
func (s *Stream) Uint64() uint64 {
	if s.off == len(s.buf) {
		var in [len(s.prefix) + 8]byte
		copy(in[:], s.prefix[:])
		binary.BigEndian.PutUint64(in[len(s.prefix):], s.counter)
		s.buf = sha256.Sum256(in[:])
		s.counter++
		s.off = 0
	}
	v := binary.BigEndian.Uint64(s.buf[s.off:])
	s.off += 8
	return v
}

// Uniform returns an unbiased integer in [0, n) for n >= 1 by rejection:
// with t = 2^64 mod n, draw x = Uint64() until x >= t, then return x mod n.
// The accepted range [t, 2^64) holds a multiple of n values. It always
// draws at least once, also for n = 1. It panics for n = 0.
func (s *Stream) Uniform(n uint64) uint64 {
	if n == 0 {
		panic("jobs: Uniform(0)")
	}
	t := -n % n // (2^64 - n) mod n == 2^64 mod n in uint64 arithmetic
	for {
		if x := s.Uint64(); x >= t {
			return x % n
		}
	}
}

// shuffle permutes a in place by Fisher–Yates: for i from len(a)-1 down to
// 1, j = Uniform(i+1), swap a[i] and a[j].
func shuffle[T any](s *Stream, a []T) {
	for i := len(a) - 1; i >= 1; i-- {
		j := s.Uniform(uint64(i) + 1)
		a[i], a[j] = a[j], a[i]
	}
}

// microID is SHA256("jobmesh/micro/v1" ‖ jobID ‖ seed ‖ uint64be(macroIndex) ‖ uint64be(slot)).
// Regular and verifier MicroJobs get IDs of the same form; only the seed
// tells which slot holds the verifier.
func microID(job ID, seed Seed, macroIndex, slot uint64) Hash {
	var in [16 + 32 + 32 + 8 + 8]byte
	copy(in[:16], tagMicro)
	copy(in[16:48], job[:])
	copy(in[48:80], seed[:])
	binary.BigEndian.PutUint64(in[80:], macroIndex)
	binary.BigEndian.PutUint64(in[88:], slot)
	return sha256.Sum256(in[:])
}

// macroID is SHA256("jobmesh/macro/v1" ‖ jobID ‖ uint64be(macroIndex)).
func macroID(job ID, macroIndex uint64) Hash {
	var in [16 + 32 + 8]byte
	copy(in[:16], tagMacro)
	copy(in[16:48], job[:])
	binary.BigEndian.PutUint64(in[48:], macroIndex)
	return sha256.Sum256(in[:])
}
