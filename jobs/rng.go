package jobs

import (
	"crypto/sha256"
	"encoding/binary"

	"golang.org/x/crypto/sha3"

	"github.com/jobmesh/jobmesh/dispatch"
)

// Domain tags keep the hashes of different derivations apart. Each is 16
// ASCII bytes, hashed without a length prefix.
const (
	tagSlice = "jobmesh/slice/v1"
	tagMicro = "jobmesh/micro/v1"
	tagMacro = "jobmesh/macro/v1"
	tagCheck = "jobmesh/check/v1"
	tagLapse = "jobmesh/lapse/v1"
)

// Stream is the slicing RNG of one MacroJob: dispatch's SHA-256 counter
// stream with the prefix tag ‖ seed ‖ uint64be(macroIndex), so
//
//	block(c) = SHA256("jobmesh/slice/v1" ‖ seed ‖ uint64be(macroIndex) ‖ uint64be(c)), c = 0, 1, ...
//
// The stream is block(0) ‖ block(1) ‖ ...; Uint64 reads its next 8 bytes as
// a big-endian integer, and Uniform draws by rejection (dispatch.Stream).
type Stream = dispatch.Stream

// NewStream returns the stream for seed and MacroJob index.
func NewStream(seed Seed, macroIndex uint64) *Stream {
	return dispatch.NewCounterStream([]byte(tagSlice), seed[:], binary.BigEndian.AppendUint64(nil, macroIndex))
}

// NewCheckStream returns the check stream of MacroJob macroIndex for check
// seed s: as NewStream, with the prefix "jobmesh/check/v1" ‖ s ‖
// uint64be(macroIndex).
func NewCheckStream(s Seed, macroIndex uint64) *Stream {
	return dispatch.NewCounterStream([]byte(tagCheck), s[:], binary.BigEndian.AppendUint64(nil, macroIndex))
}

// CommitSeed is the commitment to a DApp's secret check seed:
// keccak256(secret), the value JobInfo.SeedCommitment and the escrow hold.
func CommitSeed(secret Seed) Seed {
	h := sha3.NewLegacyKeccak256()
	h.Write(secret[:])
	return Seed(h.Sum(nil))
}

// LapseSeed is the check seed of a job whose DApp did not reveal its
// secret in time: SHA256("jobmesh/lapse/v1" ‖ jobID ‖ c_0 ‖ c_1 ‖ ...),
// where c_i is, for the i-th regular MicroJob in plan order, the smallest
// commitment hash made to it. Anyone can compute it once every regular
// MicroJob is committed; nobody can before.
func LapseSeed(job ID, commits []Hash) Seed {
	h := sha256.New()
	h.Write([]byte(tagLapse))
	h.Write(job[:])
	for _, c := range commits {
		h.Write(c[:])
	}
	return Seed(h.Sum(nil))
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
// Regular MicroJobs take the seed commitment as seed, verifiers the check
// seed (Plan.WithChecks).
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
