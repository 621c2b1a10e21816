package dispatch

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Domain tags keep the seed and stream hashes from colliding with any other
// SHA-256 use in the mesh. They carry the derivation version.
const (
	seedDomain   = "jobmesh/dispatch/seed/v1"
	streamDomain = "jobmesh/dispatch/rng/v1"
)

// weightScale is the integer resolution of a weight relative to the largest
// weight of a draw: 2^40 units. With at most maxDraw items the total stays
// below 2^63.
const (
	weightScale = 1 << 40
	maxDraw     = 1 << 22
)

// Seed derives a draw seed from public parts, for example
// Seed([]byte(jobID), roundBytes):
//
//	SHA-256("jobmesh/dispatch/seed/v1" ‖ for each part: uint32be(len) ‖ part)
//
// The length prefixes make ("ab","c") and ("a","bc") different seeds.
func Seed(parts ...[]byte) []byte {
	h := sha256.New()
	h.Write([]byte(seedDomain))
	var n [4]byte
	for _, p := range parts {
		binary.BigEndian.PutUint32(n[:], uint32(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return h.Sum(nil)
}

// Stream is a deterministic random stream: SHA-256 in counter mode over a
// fixed prefix. Block k is
//
//	SHA-256(prefix ‖ uint64be(k)),  k = 0, 1, ...
//
// and Uint64 returns the blocks' big-endian 8-byte words in order (four per
// block). Each derivation names its prefix: a domain tag first, so that no
// two derivations share a stream. It is specified byte for byte so that any
// other implementation (or a contract) reproduces every draw; math/rand
// gives no such promise.
type Stream struct {
	in    []byte // prefix ‖ uint64be(k), k the next block's counter
	block [sha256.Size]byte
	ctr   uint64
	pos   int // next unread byte of block; sha256.Size when empty
}

// NewStream starts the dispatch stream of seed, whose prefix is
// "jobmesh/dispatch/rng/v1" ‖ seed.
func NewStream(seed []byte) *Stream {
	return NewCounterStream([]byte(streamDomain), seed)
}

// NewCounterStream starts the stream whose prefix is parts concatenated,
// without length prefixes: a derivation whose parts are not of fixed length
// must make its prefix unambiguous itself.
func NewCounterStream(parts ...[]byte) *Stream {
	n := 8
	for _, p := range parts {
		n += len(p)
	}
	in := make([]byte, 0, n)
	for _, p := range parts {
		in = append(in, p...)
	}
	return &Stream{in: in[:n], pos: sha256.Size}
}

// Uint64 returns the next word of the stream.
func (s *Stream) Uint64() uint64 {
	if s.pos == sha256.Size {
		binary.BigEndian.PutUint64(s.in[len(s.in)-8:], s.ctr)
		s.block = sha256.Sum256(s.in)
		s.ctr++
		s.pos = 0
	}
	v := binary.BigEndian.Uint64(s.block[s.pos:])
	s.pos += 8
	return v
}

// Uniform returns an unbiased integer in [0, n) for n >= 1 by rejection:
// with t = 2^64 mod n, draw x = Uint64() until x >= t, then return x mod n.
// The accepted range [t, 2^64) holds a multiple of n values. It always
// draws at least once, also for n = 1. It panics for n = 0.
func (s *Stream) Uniform(n uint64) uint64 {
	if n == 0 {
		panic("dispatch: Uniform(0)")
	}
	t := -n % n // (2^64 - n) mod n == 2^64 mod n in uint64 arithmetic
	for {
		if x := s.Uint64(); x >= t {
			return x % n
		}
	}
}

// Chooser makes weighted random choices from one seeded Stream. Uses: the
// processor for a job, the next owner among several queue requesters, the
// third processor of a dispute, k distinct replicas. Successive calls
// continue the same stream, so the sequence of calls is part of what an
// auditor must replay.
type Chooser struct {
	s *Stream
}

// NewChooser returns a Chooser over the stream of seed.
func NewChooser(seed []byte) *Chooser { return &Chooser{s: NewStream(seed)} }

// Choose returns index i with probability weights[i]/Σweights.
func (c *Chooser) Choose(weights []float64) (int, error) {
	q, total, err := quantize(weights)
	if err != nil {
		return -1, err
	}
	return pick(q, c.s.Uniform(total)), nil
}

// ChooseK returns k distinct indices, drawn one after another without
// replacement: each draw is proportional to the weights not yet drawn.
// It fails when fewer than k weights are positive.
func (c *Chooser) ChooseK(weights []float64, k int) ([]int, error) {
	q, total, err := quantize(weights)
	if err != nil {
		return nil, err
	}
	return c.chooseK(q, total, k)
}

func (c *Chooser) chooseK(q []uint64, total uint64, k int) ([]int, error) {
	positive := 0
	for _, x := range q {
		if x > 0 {
			positive++
		}
	}
	if k < 0 || k > positive {
		return nil, fmt.Errorf("%w: want %d distinct choices, %d positive weights", ErrNoCandidates, k, positive)
	}
	out := make([]int, 0, k)
	for range k {
		i := pick(q, c.s.Uniform(total))
		out = append(out, i)
		total -= q[i]
		q[i] = 0
	}
	return out, nil
}

// Choose returns index i with probability weights[i]/Σweights, drawn from
// the stream of seed (see Stream and quantize for the exact rule).
func Choose(weights []float64, seed []byte) (int, error) {
	return NewChooser(seed).Choose(weights)
}

// quantize turns weights into integers: q_i = ⌊(w_i / max w) · 2^40⌋, at
// least 1 when w_i > 0. One correctly rounded division and an exact power-of
// two product per weight, so every IEEE-754 machine gets the same integers.
// A weight below 2^-40 of the largest is drawn as if it were 2^-40 of it.
func quantize(weights []float64) ([]uint64, uint64, error) {
	return quantizeInto(nil, weights)
}

// quantizeInto is quantize writing into dst's storage when it is large
// enough.
func quantizeInto(dst []uint64, weights []float64) ([]uint64, uint64, error) {
	if len(weights) > maxDraw {
		return nil, 0, fmt.Errorf("%w: %d weights, at most %d", ErrBadWeights, len(weights), maxDraw)
	}
	var top float64
	for i, w := range weights {
		if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return nil, 0, fmt.Errorf("%w: weight %d is %v", ErrBadWeights, i, w)
		}
		top = max(top, w)
	}
	if top == 0 {
		return nil, 0, fmt.Errorf("%w: every weight is 0", ErrNoCandidates)
	}
	q := slices.Grow(dst[:0], len(weights))[:len(weights)]
	clear(q)
	var total uint64
	for i, w := range weights {
		if w == 0 {
			continue
		}
		r := float64(w/top) * weightScale
		x := uint64(math.Floor(r))
		x = max(x, 1)
		q[i] = x
		total += x
	}
	return q, total, nil
}

// pick returns the index whose cumulative interval holds r.
func pick(q []uint64, r uint64) int {
	for i, x := range q {
		if r < x {
			return i
		}
		r -= x
	}
	panic("dispatch: draw beyond total weight")
}
