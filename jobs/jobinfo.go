package jobs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"golang.org/x/crypto/sha3"
)

// Sentinel errors. Validation returns field errors that wrap one of these,
// joined with errors.Join, so callers match with errors.Is.
var (
	ErrInvalidURI          = errors.New("jobs: invalid URI")
	ErrInvalidHash         = errors.New("jobs: invalid content hash")
	ErrInvalidSlicing      = errors.New("jobs: invalid slicing parameters")
	ErrMissingSeed         = errors.New("jobs: missing seed")
	ErrInvalidPrice        = errors.New("jobs: invalid price")
	ErrInvalidRequirements = errors.New("jobs: invalid requirements")
	ErrInvalidWallet       = errors.New("jobs: invalid creator wallet")
	ErrInvalidDeadline     = errors.New("jobs: invalid deadline")
	ErrInvalidOutput       = errors.New("jobs: invalid output assembly")
	ErrInvalidTaskSize     = errors.New("jobs: invalid task size")
	ErrUnsupportedVersion  = errors.New("jobs: unsupported schema version")
	ErrNonCanonical        = errors.New("jobs: non-canonical encoding")
	ErrTooLarge            = errors.New("jobs: encoding too large")
	ErrMalformed           = errors.New("jobs: malformed encoding")
	ErrNotFound            = errors.New("jobs: not found")
)

// SchemaVersion is the only JobInfo schema version this package encodes and
// accepts. It is independent of the release number. Version 1 carried the
// DApp's seed in the clear (docs/PROTOCOL.md, appendix).
const SchemaVersion = 2

// Defaults for the slicing and requirement parameters (see ApplyDefaults).
const (
	DefaultMicroJobsPerMacro = 10 // N
	DefaultBlocksPerMicro    = 10 // K
	DefaultReplicas          = 1  // R
)

// Bounds. They keep a plan small enough to compute on every node and the
// canonical encoding well under MaxEncodedSize.
const (
	MinBlockSize         = 1
	MaxBlockSize         = 16 << 20 // 16 MiB
	MaxMicroJobsPerMacro = 1000     // N
	MaxBlocksPerMicro    = 1000     // K
	MaxBlocks            = 1 << 22  // blocks per job; bounds the plan's memory (32 MiB of indices)
	MaxMicroJobs         = 1 << 18  // regular MicroJobs per job; bounds the per-MicroJob part of a plan
	MaxReplicas          = 16
	// MaxQueueItems bounds one MacroJob room's queue: (N+1)·R items, the
	// N regular MicroJobs and the verifier, each R times. It equals
	// macrojob.MaxItems (a test checks).
	MaxQueueItems     = 4096
	MaxURILength      = 2048
	MaxGPUModelLength = 128
	MaxModelCIDs      = 64
	MaxColumns        = 1 << 16
	MaxTaskSize       = 1 << 53 // exact in IEEE doubles, so JSON tooling elsewhere keeps it
	MaxMinVRAMMiB     = 1 << 24 // 16 TiB
	MaxDeadline       = 1 << 40 // unix seconds, far beyond any real deadline
)

// maxPrice is 2^256-1: the price must fit the escrow contract's uint256.
var maxPrice = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// Output assembly kinds.
const (
	OutputConcat  = "concat"   // block outputs concatenated in block order (default)
	OutputPNGGrid = "png-grid" // block outputs are PNG tiles laid out in Columns columns
)

// Hash is a SHA-256 digest. Its text form is 64 lowercase hex digits.
type Hash [32]byte

// String returns the lowercase hex form.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is all zeros (the "missing" value).
func (h Hash) IsZero() bool { return h == Hash{} }

// ParseHash parses 64 lowercase hex digits.
func ParseHash(s string) (Hash, error) {
	var h Hash
	if len(s) != 64 || strings.ToLower(s) != s {
		return h, fmt.Errorf("%w: want 64 lowercase hex digits", ErrMalformed)
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return h, nil
}

// ID identifies a job: SHA-256 of its canonical encoding.
type ID = Hash

// Seed is a 32-byte seed: the DApp's secret check seed, its public
// commitment, or a check seed derived from records.
type Seed = Hash

// Source names content by URI and pins it by its SHA-256.
type Source struct {
	URI    string // ipfs://, https://, http://, sftp://, ws://, wss:// or file://
	SHA256 Hash   // SHA-256 of the whole content
}

// Data is the job's input: a Source plus its size, which slicing needs
// before anything is fetched.
type Data struct {
	Source
	Size uint64 // bytes, at least 1
}

// Slicing holds the parameters of the N+1 scheme (see Slice).
type Slicing struct {
	BlockSize      uint64 // bytes per block, MinBlockSize..MaxBlockSize; no default
	MicroJobs      uint32 // N: regular MicroJobs per MacroJob, 1..1000; default 10
	BlocksPerMicro uint32 // K: blocks per regular MicroJob, 1..1000; default 10
	VerifierBlocks uint32 // K': blocks in the verifier MicroJob, 1..N; default min(K, N)
}

// Requirements say what a processor needs to take the job.
type Requirements struct {
	MinVRAMMiB uint64   // minimum GPU memory in MiB; 0 = no GPU needed
	GPUModel   string   // required card model; "" = any
	ModelCIDs  []string // content IDs of models the code needs, canonical CID strings, unique
	Replicas   uint32   // R: processors per MicroJob for replicated validation, 1..16; default 1
}

// Output says how block outputs are assembled into the job result.
type Output struct {
	Kind    string // OutputConcat (default) or OutputPNGGrid
	Columns uint32 // grid columns for OutputPNGGrid (1..65536); 0 for OutputConcat
}

// Address is an EVM account address. Its canonical text is "0x" and 40
// lowercase hex digits.
type Address [20]byte

// String returns the canonical lowercase form.
func (a Address) String() string { return "0x" + hex.EncodeToString(a[:]) }

// JobInfo describes a job. It is immutable once published: its ID is the
// SHA-256 of its canonical encoding (see Encode).
type JobInfo struct {
	Version uint32  // schema version; SchemaVersion
	Code    Source  // the WebAssembly module
	Data    Data    // the input data
	Slicing Slicing // how data is cut into MacroJobs and MicroJobs
	// SeedCommitment is keccak256 of the DApp's secret 32-byte check seed
	// (CommitSeed). It seeds the public slicing and the MicroJob IDs; the
	// secret itself stays with the DApp until every regular MicroJob is
	// committed, then draws the checked blocks (Plan.WithChecks). The
	// escrow holds the same commitment. Must not be zero.
	SeedCommitment Seed
	PriceWei       *big.Int     // escrow amount in wei, 1..2^256-1
	Requirements   Requirements // what a processor needs
	Creator        Address      // creator's wallet (refunds go here); must not be zero
	Deadline       int64        // unix seconds; must be in the future when submitted
	Output         Output       // output assembly
	TaskSize       uint64       // optional task size estimate in pricing units; 0 = unknown
	// Limits are optional per-block limits below the processors' own;
	// encoded only when set (Limits.IsZero false).
	Limits Limits
}

// ApplyDefaults fills zero-valued optional parameters with their defaults.
// The canonical encoding always carries explicit values, so defaults are
// applied by the author before the ID is computed, never on decode.
func (j *JobInfo) ApplyDefaults() {
	if j.Version == 0 {
		j.Version = SchemaVersion
	}
	if j.Slicing.MicroJobs == 0 {
		j.Slicing.MicroJobs = DefaultMicroJobsPerMacro
	}
	if j.Slicing.BlocksPerMicro == 0 {
		j.Slicing.BlocksPerMicro = DefaultBlocksPerMicro
	}
	if j.Slicing.VerifierBlocks == 0 {
		j.Slicing.VerifierBlocks = min(j.Slicing.BlocksPerMicro, j.Slicing.MicroJobs)
	}
	if j.Requirements.Replicas == 0 {
		j.Requirements.Replicas = DefaultReplicas
	}
	if j.Output.Kind == "" {
		j.Output.Kind = OutputConcat
	}
}

// ID returns the job ID: SHA-256 of the canonical encoding. It does not
// validate; call Validate first where input is untrusted.
func (j *JobInfo) ID() ID {
	return sha256.Sum256(j.Encode())
}

// NumBlocks is ceil(Data.Size / BlockSize), or 0 when BlockSize is 0.
func (j *JobInfo) NumBlocks() uint64 {
	if j.Slicing.BlockSize == 0 {
		return 0
	}
	return ceilDiv(j.Data.Size, j.Slicing.BlockSize)
}

func ceilDiv(a, b uint64) uint64 {
	if a == 0 {
		return 0
	}
	return (a-1)/b + 1
}

// Checksummed returns the EIP-55 mixed-case form, for display.
func (a Address) Checksummed() string {
	lower := hex.EncodeToString(a[:])
	k := sha3.NewLegacyKeccak256()
	k.Write([]byte(lower))
	sum := k.Sum(nil)
	out := []byte("0x" + lower)
	for i := 0; i < 40; i++ {
		nibble := sum[i/2] >> 4
		if i%2 == 1 {
			nibble = sum[i/2] & 0x0f
		}
		if out[2+i] >= 'a' && nibble >= 8 {
			out[2+i] -= 'a' - 'A'
		}
	}
	return string(out)
}
