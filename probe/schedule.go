package probe

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"time"
)

// WindowOf is the index of the window t falls in: floor(Unix time /
// Window). Config.Window must be positive.
func (c Config) WindowOf(t time.Time) uint64 {
	s := t.Unix()
	if s < 0 {
		return 0
	}
	return uint64(s) / uint64(c.Window/time.Second)
}

// Start is when window w begins.
func (c Config) Start(w uint64) time.Time {
	return time.Unix(int64(w*uint64(c.Window/time.Second)), 0)
}

// Offset is when, after the start of window w, processor p challenges:
// H("jobmesh/probe" || w || p) mod (Window/2), to the nanosecond. Public,
// so every node knows when p's challenge is due, and spread over the first
// half of the window so that the challenge's deadline falls inside it.
func (c Config) Offset(w uint64, p string) time.Duration {
	h := sha256.Sum256(slices.Concat([]byte("jobmesh/probe"), be64(w), []byte(p)))
	return time.Duration(binary.BigEndian.Uint64(h[:8]) % uint64(c.Window/2))
}

// ChallengeAt is when processor p challenges in window w.
func (c Config) ChallengeAt(w uint64, p string) time.Time {
	return c.Start(w).Add(c.Offset(w, p))
}

// Rank is the key that orders candidate q among challenger p's group
// members in window w: H(w || p || q), lowest first.
func Rank(w uint64, p, q string) [32]byte {
	return sha256.Sum256(slices.Concat(be64(w), []byte(p), []byte{0}, []byte(q)))
}

// Group is challenger p's group in window w: p, then up to MaxGroup−1 of
// candidates (the live processors p is connected to; p itself and
// duplicates are skipped), the lowest by Rank.
func Group(w uint64, p string, candidates []string) []string {
	others := slices.Clone(candidates)
	others = slices.DeleteFunc(others, func(q string) bool { return q == p || q == "" })
	slices.Sort(others)
	others = slices.Compact(others)
	slices.SortFunc(others, func(a, b string) int {
		ra, rb := Rank(w, p, a), Rank(w, p, b)
		if c := bytes.Compare(ra[:], rb[:]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	if len(others) > MaxGroup-1 {
		others = others[:MaxGroup-1]
	}
	return append([]string{p}, others...)
}

// Input is the probe module's input for challenger p's probe in window w.
func Input(w uint64, p string) []byte {
	h := sha256.Sum256(slices.Concat([]byte("jobmesh/probe/input"), be64(w), []byte(p)))
	return h[:]
}

// Expected is the digest of the output every member must answer for
// challenger p's probe in window w: Digest(Mix(Input(w, p))).
func Expected(w uint64, p string) [32]byte { return Digest(Mix(Input(w, p))) }

// Digest is a probe output's digest, the payload of a result record.
func Digest(out []byte) [32]byte { return sha256.Sum256(out) }

// CommitHash binds an output digest to the member that answers it, so a
// commitment cannot be copied by another member: H(digest || q).
func CommitHash(digest [32]byte, q string) [32]byte {
	return sha256.Sum256(slices.Concat(digest[:], []byte(q)))
}

func be64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
