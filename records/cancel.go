package records

import (
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	ethcrypto "github.com/ethereum/go-ethereum/crypto"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
)

// maxCancelRecord bounds a cancel record's payload.
const maxCancelRecord = 1 << 10

// cancelDomain separates cancel signatures from every other signature the
// creator's wallet makes. The version is the record's.
const cancelDomain = "jobmesh/cancel/v1"

// ErrBadCancel is wrapped when a cancel record does not cancel its job.
var ErrBadCancel = errors.New("records: bad cancel record")

// CancelRecord withdraws a job: Signature is the creator wallet's
// secp256k1 signature (65 bytes, r‖s‖v, lowercase hex) over CancelDigest.
type CancelRecord struct {
	Job       string `json:"job"`
	Signature string `json:"signature"`
}

// CancelDigest is the digest a creator signs to cancel job id:
// keccak256("jobmesh/cancel/v1" ‖ id).
func CancelDigest(id jobs.ID) [32]byte {
	return [32]byte(ethcrypto.Keccak256([]byte(cancelDomain), id[:]))
}

// SignCancel makes job id's cancel record with the creator's wallet key.
func SignCancel(id jobs.ID, key *ecdsa.PrivateKey) ([]byte, error) {
	d := CancelDigest(id)
	sig, err := ethcrypto.Sign(d[:], key)
	if err != nil {
		return nil, fmt.Errorf("records: signing cancel: %w", err)
	}
	return json.Marshal(CancelRecord{Job: id.String(), Signature: hex.EncodeToString(sig)})
}

// DecodeCancel decodes a cancel record's payload.
func DecodeCancel(b []byte) (CancelRecord, error) {
	var r CancelRecord
	if len(b) > maxCancelRecord {
		return r, fmt.Errorf("%w: %d bytes, limit %d", ErrBadRecord, len(b), maxCancelRecord)
	}
	if err := decodeStrict(b, &r); err != nil {
		return r, err
	}
	return r, nil
}

// CheckCancel reports whether payload is a valid cancel of the job info
// describes: it names that job and its signature recovers to the job's
// creator.
func CheckCancel(info *jobs.JobInfo, payload []byte) error {
	r, err := DecodeCancel(payload)
	if err != nil {
		return err
	}
	id := info.ID()
	if r.Job != id.String() {
		return fmt.Errorf("%w: record names job %q, stored under %s", ErrBadCancel, r.Job, id)
	}
	if err := checkCreatorSignature(r.Signature, CancelDigest(id), info.Creator); err != nil {
		return fmt.Errorf("%w: %w", ErrBadCancel, err)
	}
	return nil
}

// checkCreatorSignature checks that sig (65 bytes r‖s‖v in lowercase hex)
// is creator's secp256k1 signature over digest d.
func checkCreatorSignature(sig string, d [32]byte, creator jobs.Address) error {
	b, err := hex.DecodeString(sig)
	if err != nil || len(b) != 65 || strings.ToLower(sig) != sig {
		return errors.New("signature is not 65 bytes of lowercase hex")
	}
	pub, err := ethcrypto.SigToPub(d[:], b)
	if err != nil {
		return err
	}
	if got := ethcrypto.PubkeyToAddress(*pub); jobs.Address(got) != creator {
		return fmt.Errorf("signed by %s, not the creator %s", strings.ToLower(got.Hex()), creator)
	}
	return nil
}

// Cancelled reports whether store holds a valid cancel record for the job
// info describes. A missing or invalid record is no cancel.
func Cancelled(ctx context.Context, store crdt.Reader, info *jobs.JobInfo) (bool, error) {
	rec, err := store.Get(ctx, CancelKey(info.ID()))
	if errors.Is(err, crdt.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if rec.Type != CancelType {
		return false, nil
	}
	return CheckCancel(info, rec.Payload) == nil, nil
}
