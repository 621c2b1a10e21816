package microjob

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"

	"github.com/jobmesh/jobmesh/internal/peertext"
	"github.com/jobmesh/jobmesh/internal/strictjson"
	"github.com/jobmesh/jobmesh/jobs"
)

// RecordVersion is the version of the Commitment and Disclosure encodings.
// It is independent of the release number.
const RecordVersion = 1

// Size limits of the record encodings. A disclosure of MaxRecordBlocks
// blocks takes about 80 KiB; both limits stay under the replicated store's
// 1 MiB payload limit.
const (
	MaxCommitmentBytes = 4 << 10
	MaxDisclosureBytes = 256 << 10
	// MaxRecordBlocks bounds the blocks of one disclosure: a MicroJob holds
	// at most jobs.MaxBlocksPerMicro blocks (a verifier at most N ≤ 1000).
	MaxRecordBlocks = jobs.MaxBlocksPerMicro
)

// commitDomain opens every commitment preimage, so that the hash cannot be
// confused with any other SHA-256 in jobmesh.
const commitDomain = "jobmesh/commit/v1"

// Commitment is the first-round result record: a binding, hiding hash of a
// processor's result for one MicroJob (see ComputeCommit). It is stored
// under records.CommitKey, signed by the replicated store with the
// processor's key.
type Commitment struct {
	Version    uint32   // RecordVersion
	JobID      jobs.ID  // the job
	MacroIndex uint64   // the MacroJob's index in the plan
	MicroID    jobs.ID  // the MicroJob
	Processor  string   // the processor's libp2p peer ID (the record's author)
	Wallet     string   // the processor's EVM address, "0x" and 40 lowercase hex digits
	Commit     [32]byte // ComputeCommit(block hashes, result CID, salt, wallet)
}

// Disclosure is the second-round result record: the values behind a
// Commitment. It is stored under records.ResultKey once every MicroJob of
// the MacroJob has a commitment.
type Disclosure struct {
	Version      uint32     // RecordVersion
	JobID        jobs.ID    // the job
	MacroIndex   uint64     // the MacroJob's index in the plan
	MicroID      jobs.ID    // the MicroJob
	Processor    string     // the processor's libp2p peer ID (the record's author)
	Wallet       string     // the processor's EVM address, as in the Commitment
	BlockIndices []uint64   // the MicroJob's blocks, in the plan's order
	BlockHashes  [][32]byte // SHA-256 of each block's output, same order
	ResultCID    cid.Cid    // UnixFS directory of the block outputs (see BlockFileName)
	Salt         [32]byte   // the secret that hid the commitment (NewSalt)
	// Inline, when set, holds every block of the result directory's DAG
	// (at most MaxInlineBlocks blocks of MaxInlineBytes together), so the
	// finalizer reads small results from the record instead of the
	// network. Each block is checked against its CID when decoded; it is
	// not part of the commitment.
	Inline []blocks.Block
}

// Bounds of a disclosure's inline result blocks.
const (
	MaxInlineBytes  = 4 << 10
	MaxInlineBlocks = 64
)

// NewSalt returns 32 random bytes from crypto/rand. A fresh salt per
// commitment keeps a commitment from revealing its hashes: without it,
// anyone who ran the same blocks could test a guess against it.
func NewSalt() ([32]byte, error) {
	var s [32]byte
	if _, err := rand.Read(s[:]); err != nil {
		return s, fmt.Errorf("microjob: salt: %w", err)
	}
	return s, nil
}

// ComputeCommit returns the commitment hash:
//
//	SHA-256( "jobmesh/commit/v1"           17 bytes of ASCII
//	       ‖ uint32be(n)                   number of block hashes
//	       ‖ hash_0 ‖ … ‖ hash_{n-1}       32 bytes each, in the MicroJob's block order
//	       ‖ uint32be(len(cid))            length of the binary CID
//	       ‖ cid                           the result CID's binary form (cid.Bytes)
//	       ‖ salt                          32 bytes
//	       ‖ wallet )                      20 bytes, the processor's EVM address
//
// Binding the wallet means that a commitment copied from another processor
// only ever pays that processor; the salt hides the hashes until disclosure.
func ComputeCommit(blockHashes [][32]byte, result cid.Cid, salt [32]byte, wallet [20]byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(commitDomain))
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(blockHashes)))
	h.Write(n[:])
	for _, bh := range blockHashes {
		h.Write(bh[:])
	}
	cb := result.Bytes()
	binary.BigEndian.PutUint32(n[:], uint32(len(cb)))
	h.Write(n[:])
	h.Write(cb)
	h.Write(salt[:])
	h.Write(wallet[:])
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// Commitment returns the commitment a processor writes before disclosing d.
func (d Disclosure) Commitment() (Commitment, error) {
	w, err := ParseWallet(d.Wallet)
	if err != nil {
		return Commitment{}, err
	}
	return Commitment{
		Version:    d.Version,
		JobID:      d.JobID,
		MacroIndex: d.MacroIndex,
		MicroID:    d.MicroID,
		Processor:  d.Processor,
		Wallet:     d.Wallet,
		Commit:     ComputeCommit(d.BlockHashes, d.ResultCID, d.Salt, w),
	}, nil
}

// Matches reports (as ErrMismatch) whether d discloses c: the same job,
// MacroJob, MicroJob, processor and wallet, and values that hash to c's
// commit.
func (d Disclosure) Matches(c Commitment) error {
	switch {
	case d.Version != c.Version:
		return fmt.Errorf("%w: version %d, commitment %d", ErrMismatch, d.Version, c.Version)
	case d.JobID != c.JobID:
		return fmt.Errorf("%w: job %s, commitment %s", ErrMismatch, d.JobID, c.JobID)
	case d.MacroIndex != c.MacroIndex:
		return fmt.Errorf("%w: MacroJob %d, commitment %d", ErrMismatch, d.MacroIndex, c.MacroIndex)
	case d.MicroID != c.MicroID:
		return fmt.Errorf("%w: MicroJob %s, commitment %s", ErrMismatch, d.MicroID, c.MicroID)
	case d.Processor != c.Processor:
		return fmt.Errorf("%w: processor %s, commitment %s", ErrMismatch, d.Processor, c.Processor)
	case d.Wallet != c.Wallet:
		return fmt.Errorf("%w: wallet %s, commitment %s", ErrMismatch, d.Wallet, c.Wallet)
	case len(d.BlockIndices) != len(d.BlockHashes):
		return fmt.Errorf("%w: %d block indices, %d hashes", ErrMismatch, len(d.BlockIndices), len(d.BlockHashes))
	}
	mine, err := d.Commitment()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMismatch, err)
	}
	if mine.Commit != c.Commit {
		return fmt.Errorf("%w: values hash to %x, commitment is %x", ErrMismatch, mine.Commit, c.Commit)
	}
	return nil
}

// ParseWallet parses an EVM address in its canonical text form: "0x" and
// 40 lowercase hex digits.
func ParseWallet(s string) ([20]byte, error) {
	var a [20]byte
	if len(s) != 42 || !strings.HasPrefix(s, "0x") || strings.ToLower(s) != s {
		return a, fmt.Errorf("%w: wallet %q: want 0x and 40 lowercase hex digits", ErrMalformed, s)
	}
	if _, err := hex.Decode(a[:], []byte(s[2:])); err != nil {
		return a, fmt.Errorf("%w: wallet %q: %v", ErrMalformed, s, err)
	}
	return a, nil
}

// checkPeer accepts only the canonical text of a libp2p peer ID.
func checkPeer(s string) error {
	ok, err := peertext.Canonical(s)
	if err != nil {
		return fmt.Errorf("%w: processor %q: %v", ErrMalformed, s, err)
	}
	if !ok {
		return fmt.Errorf("%w: processor %q is not in canonical form", ErrMalformed, s)
	}
	return nil
}

// Wire forms. The encoding is JSON with exactly these keys in this order,
// no whitespace, hashes as 64 lowercase hex digits, and the CID in its
// default string form; Decode re-encodes and refuses anything else, so one
// record has one encoding.
type commitmentWire struct {
	Version   uint32 `json:"version"`
	JobID     string `json:"job"`
	Macro     uint64 `json:"macro"`
	MicroID   string `json:"micro"`
	Processor string `json:"processor"`
	Wallet    string `json:"wallet"`
	Commit    string `json:"commit"`
}

type disclosureWire struct {
	Version   uint32       `json:"version"`
	JobID     string       `json:"job"`
	Macro     uint64       `json:"macro"`
	MicroID   string       `json:"micro"`
	Processor string       `json:"processor"`
	Wallet    string       `json:"wallet"`
	Blocks    []uint64     `json:"blocks"`
	Hashes    []string     `json:"hashes"`
	Result    string       `json:"result"`
	Salt      string       `json:"salt"`
	Inline    []inlineWire `json:"inline,omitempty"`
}

// inlineWire is one inline result block: its CID and its bytes.
type inlineWire struct {
	CID  string `json:"cid"`
	Data []byte `json:"data"`
}

// Encode returns the canonical encoding of c.
func (c Commitment) Encode() []byte {
	b, err := json.Marshal(commitmentWire{
		Version: c.Version, JobID: c.JobID.String(), Macro: c.MacroIndex, MicroID: c.MicroID.String(),
		Processor: c.Processor, Wallet: c.Wallet, Commit: hex.EncodeToString(c.Commit[:]),
	})
	if err != nil {
		panic(err) // strings and integers always marshal
	}
	return b
}

// DecodeCommitment parses and checks a canonical Commitment encoding of at
// most MaxCommitmentBytes.
func DecodeCommitment(b []byte) (Commitment, error) {
	var w commitmentWire
	if err := strictJSON(b, MaxCommitmentBytes, &w); err != nil {
		return Commitment{}, err
	}
	if w.Version != RecordVersion {
		return Commitment{}, fmt.Errorf("%w: commitment version %d", ErrVersion, w.Version)
	}
	c := Commitment{Version: w.Version, MacroIndex: w.Macro, Processor: w.Processor, Wallet: w.Wallet}
	var err error
	if c.JobID, err = parseHash("job", w.JobID); err != nil {
		return Commitment{}, err
	}
	if c.MicroID, err = parseHash("micro", w.MicroID); err != nil {
		return Commitment{}, err
	}
	if c.Commit, err = parseHash("commit", w.Commit); err != nil {
		return Commitment{}, err
	}
	if err := checkPeer(w.Processor); err != nil {
		return Commitment{}, err
	}
	if _, err := ParseWallet(w.Wallet); err != nil {
		return Commitment{}, err
	}
	if !bytes.Equal(c.Encode(), b) {
		return Commitment{}, fmt.Errorf("%w: commitment", ErrNonCanonical)
	}
	return c, nil
}

// Encode returns the canonical encoding of d. The result CID must be
// defined and BlockHashes and BlockIndices as long as each other for the
// encoding to decode.
func (d Disclosure) Encode() []byte {
	w := disclosureWire{
		Version: d.Version, JobID: d.JobID.String(), Macro: d.MacroIndex, MicroID: d.MicroID.String(),
		Processor: d.Processor, Wallet: d.Wallet, Blocks: d.BlockIndices,
		Hashes: make([]string, len(d.BlockHashes)), Salt: hex.EncodeToString(d.Salt[:]),
	}
	if w.Blocks == nil {
		w.Blocks = []uint64{}
	}
	for i, h := range d.BlockHashes {
		w.Hashes[i] = hex.EncodeToString(h[:])
	}
	if d.ResultCID.Defined() {
		w.Result = d.ResultCID.String()
	}
	for _, b := range d.Inline {
		w.Inline = append(w.Inline, inlineWire{CID: b.Cid().String(), Data: b.RawData()})
	}
	b, err := json.Marshal(w)
	if err != nil {
		panic(err)
	}
	return b
}

// DecodeDisclosure parses and checks a canonical Disclosure encoding of at
// most MaxDisclosureBytes.
func DecodeDisclosure(b []byte) (Disclosure, error) {
	var w disclosureWire
	if err := strictJSON(b, MaxDisclosureBytes, &w); err != nil {
		return Disclosure{}, err
	}
	if w.Version != RecordVersion {
		return Disclosure{}, fmt.Errorf("%w: disclosure version %d", ErrVersion, w.Version)
	}
	if len(w.Blocks) != len(w.Hashes) {
		return Disclosure{}, fmt.Errorf("%w: %d blocks but %d hashes", ErrMalformed, len(w.Blocks), len(w.Hashes))
	}
	if len(w.Blocks) == 0 || len(w.Blocks) > MaxRecordBlocks {
		return Disclosure{}, fmt.Errorf("%w: %d blocks, want 1..%d", ErrMalformed, len(w.Blocks), MaxRecordBlocks)
	}
	d := Disclosure{
		Version: w.Version, MacroIndex: w.Macro, Processor: w.Processor, Wallet: w.Wallet,
		BlockIndices: w.Blocks, BlockHashes: make([][32]byte, len(w.Hashes)),
	}
	var err error
	if d.JobID, err = parseHash("job", w.JobID); err != nil {
		return Disclosure{}, err
	}
	if d.MicroID, err = parseHash("micro", w.MicroID); err != nil {
		return Disclosure{}, err
	}
	if d.Salt, err = parseHash("salt", w.Salt); err != nil {
		return Disclosure{}, err
	}
	for i, s := range w.Hashes {
		if d.BlockHashes[i], err = parseHash("hash", s); err != nil {
			return Disclosure{}, err
		}
	}
	if d.ResultCID, err = cid.Decode(w.Result); err != nil {
		return Disclosure{}, fmt.Errorf("%w: result CID %q: %v", ErrMalformed, w.Result, err)
	}
	if err := checkPeer(w.Processor); err != nil {
		return Disclosure{}, err
	}
	if _, err := ParseWallet(w.Wallet); err != nil {
		return Disclosure{}, err
	}
	if d.Inline, err = decodeInline(w.Inline); err != nil {
		return Disclosure{}, err
	}
	if !bytes.Equal(d.Encode(), b) {
		return Disclosure{}, fmt.Errorf("%w: disclosure", ErrNonCanonical)
	}
	return d, nil
}

// decodeInline checks a disclosure's inline blocks: within the bounds,
// and each one's bytes hashing (SHA-256) to its CID.
func decodeInline(ws []inlineWire) ([]blocks.Block, error) {
	if len(ws) > MaxInlineBlocks {
		return nil, fmt.Errorf("%w: %d inline blocks, limit %d", ErrMalformed, len(ws), MaxInlineBlocks)
	}
	var out []blocks.Block
	size := 0
	for _, iw := range ws {
		if size += len(iw.Data); size > MaxInlineBytes {
			return nil, fmt.Errorf("%w: inline blocks over %d bytes", ErrMalformed, MaxInlineBytes)
		}
		c, err := cid.Decode(iw.CID)
		if err != nil {
			return nil, fmt.Errorf("%w: inline block CID %q: %v", ErrMalformed, iw.CID, err)
		}
		if c.Prefix().MhType != mh.SHA2_256 {
			return nil, fmt.Errorf("%w: inline block %s is not SHA-256", ErrMalformed, c)
		}
		b, err := blocks.NewBlockWithCid(iw.Data, c)
		if err != nil {
			return nil, fmt.Errorf("%w: inline block %s: %v", ErrMalformed, c, err)
		}
		if got, err := c.Prefix().Sum(iw.Data); err != nil || !got.Equals(c) {
			return nil, fmt.Errorf("%w: inline block does not hash to %s", ErrMalformed, c)
		}
		out = append(out, b)
	}
	return out, nil
}

// strictJSON decodes one JSON object of at most limit bytes into v,
// refusing unknown fields and trailing data, with this package's sentinels.
func strictJSON(b []byte, limit int, v any) error {
	err := strictjson.Decode(b, limit, v)
	switch {
	case errors.Is(err, strictjson.ErrTooLarge):
		return fmt.Errorf("%w: %w", ErrTooLarge, err)
	case err != nil:
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return nil
}

func parseHash(field, s string) ([32]byte, error) {
	h, err := jobs.ParseHash(s)
	if err != nil {
		return h, fmt.Errorf("%w: %s: %v", ErrMalformed, field, err)
	}
	return h, nil
}
