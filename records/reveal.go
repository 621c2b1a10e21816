package records

import (
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	ethcrypto "github.com/ethereum/go-ethereum/crypto"

	"github.com/jobmesh/jobmesh/jobs"
)

// maxRevealRecord bounds a reveal record's payload.
const maxRevealRecord = 1 << 10

// revealDomain separates reveal signatures from every other signature the
// creator's wallet makes. The version is the record's.
const revealDomain = "jobmesh/reveal/v1"

// Why a reveal record does not count, matched with errors.Is. Each wraps
// ErrBadReveal.
var (
	// ErrBadReveal is wrapped by every reason a reveal record does not
	// count.
	ErrBadReveal = errors.New("records: bad reveal record")
	// ErrRevealMismatch: the seed is not the one the job committed to.
	ErrRevealMismatch = fmt.Errorf("%w: seed does not match the job's commitment", ErrBadReveal)
	// ErrRevealAuthor: the signature is not the creator wallet's.
	ErrRevealAuthor = fmt.Errorf("%w: not signed by the job's creator", ErrBadReveal)
)

// RevealRecord is the DApp's secret check seed of a job, published once
// every regular MicroJob of the job is committed (docs/ARCHITECTURE.md,
// "Hidden checks"): Seed is the secret (64 lowercase hex digits), whose
// keccak256 is the JobInfo's SeedCommitment, and Signature the creator
// wallet's secp256k1 signature (65 bytes, r‖s‖v, lowercase hex) over
// RevealDigest. It lives under RevealKey of the node that writes it.
type RevealRecord struct {
	Job       string `json:"job"`
	Seed      string `json:"seed"`
	Signature string `json:"signature"`
}

// RevealKey is where author keeps the reveal of job id's check seed.
func RevealKey(id jobs.ID, author string) string { return JobKey(id) + "/reveal/" + author }

// RevealDigest is the digest a creator signs to reveal job id's check
// seed: keccak256("jobmesh/reveal/v1" ‖ id ‖ seed).
func RevealDigest(id jobs.ID, seed jobs.Seed) [32]byte {
	return [32]byte(ethcrypto.Keccak256([]byte(revealDomain), id[:], seed[:]))
}

// SignReveal makes job id's reveal record of seed with the creator's
// wallet key.
func SignReveal(id jobs.ID, seed jobs.Seed, key *ecdsa.PrivateKey) ([]byte, error) {
	d := RevealDigest(id, seed)
	sig, err := ethcrypto.Sign(d[:], key)
	if err != nil {
		return nil, fmt.Errorf("records: signing reveal: %w", err)
	}
	return json.Marshal(RevealRecord{Job: id.String(), Seed: seed.String(), Signature: hex.EncodeToString(sig)})
}

// DecodeReveal decodes a reveal record's payload: at most 1 KiB, no
// unknown fields, nothing after the object.
func DecodeReveal(b []byte) (RevealRecord, error) {
	var r RevealRecord
	if len(b) > maxRevealRecord {
		return r, fmt.Errorf("%w: %d bytes, limit %d", ErrBadRecord, len(b), maxRevealRecord)
	}
	if err := decodeStrict(b, &r); err != nil {
		return r, err
	}
	return r, nil
}

// CheckReveal returns the check seed a reveal record of the job info
// describes reveals, or why it does not count: it must name that job,
// its seed must be the preimage of the job's SeedCommitment
// (ErrRevealMismatch) and its signature must recover to the job's
// creator (ErrRevealAuthor).
func CheckReveal(info *jobs.JobInfo, payload []byte) (jobs.Seed, error) {
	r, err := DecodeReveal(payload)
	if err != nil {
		return jobs.Seed{}, fmt.Errorf("%w: %w", ErrBadReveal, err)
	}
	id := info.ID()
	if r.Job != id.String() {
		return jobs.Seed{}, fmt.Errorf("%w: record names job %q, stored under %s", ErrBadReveal, r.Job, id)
	}
	seed, err := jobs.ParseHash(r.Seed)
	if err != nil || seed.String() != r.Seed {
		return jobs.Seed{}, fmt.Errorf("%w: seed is not 64 lowercase hex digits", ErrBadReveal)
	}
	if jobs.CommitSeed(seed) != info.SeedCommitment {
		return jobs.Seed{}, ErrRevealMismatch
	}
	if err := checkCreatorSignature(r.Signature, RevealDigest(id, seed), info.Creator); err != nil {
		return jobs.Seed{}, fmt.Errorf("%w: %w", ErrRevealAuthor, err)
	}
	return seed, nil
}
