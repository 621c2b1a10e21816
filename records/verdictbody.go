package records

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/microjob"

	"github.com/jobmesh/jobmesh/internal/strictjson"
)

// BodyReader reads an out-of-line verdict body from the block layer;
// *ipfs.Node satisfies it.
type BodyReader interface {
	Cat(ctx context.Context, c cid.Cid) (io.ReadCloser, error)
}

// BodyAdder stores a verdict body; *ipfs.Node satisfies it.
type BodyAdder interface {
	AddFile(ctx context.Context, r io.Reader) (cid.Cid, error)
}

const (
	// MaxVerdictBody bounds an out-of-line verdict body document. A
	// MicroJob's result takes about 1 KB of it, so this covers jobs of
	// tens of thousands of MicroJobs.
	MaxVerdictBody = 64 << 20
	// BodyFetchTimeout bounds one fetch of a verdict body, so a body that
	// no reachable peer serves fails a pass instead of blocking its loop.
	BodyFetchTimeout = 2 * time.Minute
)

var (
	// ErrBodyNotFetched is wrapped (with ErrBadRecord) by
	// DecodeVerdictRecord when the record keeps its verdict out of line:
	// the body must be fetched with LoadVerdictRecord.
	ErrBodyNotFetched = errors.New("records: verdict body not fetched")
	// ErrBodyUnavailable is wrapped when a verdict body cannot be read from
	// the block layer (no peer serves it before the deadline).
	ErrBodyUnavailable = errors.New("records: verdict body unavailable")
	// ErrBodyDigest is wrapped when a fetched body's SHA-256 is not the
	// one its record names.
	ErrBodyDigest = errors.New("records: verdict body digest mismatch")
	// ErrBodyTooLarge is wrapped when a body exceeds MaxVerdictBody.
	ErrBodyTooLarge = errors.New("records: verdict body too large")
)

// VerdictBody is the out-of-line part of a verdict record: the verdict and
// the rounds, in the encodings an inline record uses.
type VerdictBody struct {
	Verdict json.RawMessage `json:"verdict"` // microjob.Verdict.Encode()
	Rounds  []RoundOrder    `json:"rounds,omitempty"`
}

// encodeVerdictBody is the canonical body document: encoding/json's
// output of VerdictBody, and its lowercase hex SHA-256.
func encodeVerdictBody(b VerdictBody) ([]byte, string, error) {
	doc, err := json.Marshal(b)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(doc)
	return doc, hex.EncodeToString(sum[:]), nil
}

// BuildVerdictRecord returns the record to write for rec: rec itself when
// its encoding fits maxInline bytes, otherwise a record that names the body
// document, which it adds to blocks (nil: no block layer, and a record
// that does not fit fails with ErrBodyUnavailable).
func BuildVerdictRecord(ctx context.Context, rec VerdictRecord, maxInline int, blocks BodyAdder) (VerdictRecord, error) {
	inline, err := json.Marshal(rec)
	if err != nil {
		return rec, err
	}
	if len(inline) <= maxInline {
		return rec, nil
	}
	doc, sum, err := encodeVerdictBody(VerdictBody{Verdict: rec.Verdict, Rounds: rec.Rounds})
	if err != nil {
		return rec, err
	}
	if len(doc) > MaxVerdictBody {
		return rec, fmt.Errorf("%w: %d bytes, limit %d", ErrBodyTooLarge, len(doc), MaxVerdictBody)
	}
	if blocks == nil {
		return rec, fmt.Errorf("%w: no block layer to store a %d-byte body", ErrBodyUnavailable, len(doc))
	}
	c, err := blocks.AddFile(ctx, bytes.NewReader(doc))
	if err != nil {
		return rec, fmt.Errorf("records: store verdict body: %w", err)
	}
	return VerdictRecord{Culprits: rec.Culprits, Output: rec.Output, Body: c.String(), BodySHA256: sum}, nil
}

// checkBodyRef validates the body fields of a decoded record: either both
// empty (inline) or a CID and a digest with no inline verdict or rounds.
func checkBodyRef(r VerdictRecord) (cid.Cid, error) {
	if r.Body == "" {
		if r.BodySHA256 != "" {
			return cid.Undef, fmt.Errorf("%w: body digest without a body", ErrBadRecord)
		}
		return cid.Undef, nil
	}
	if len(r.Verdict) != 0 || len(r.Rounds) != 0 {
		return cid.Undef, fmt.Errorf("%w: verdict both inline and in a body", ErrBadRecord)
	}
	c, err := cid.Decode(r.Body)
	if err != nil {
		return cid.Undef, fmt.Errorf("%w: body: %w", ErrBadRecord, err)
	}
	if d, err := hex.DecodeString(r.BodySHA256); err != nil || len(d) != sha256.Size || hex.EncodeToString(d) != r.BodySHA256 {
		return cid.Undef, fmt.Errorf("%w: body digest %q is not lowercase hex SHA-256", ErrBadRecord, r.BodySHA256)
	}
	return c, nil
}

// decodeVerdictBody decodes a body document of at most limit bytes
// strictly (no unknown fields, canonical) and checks its verdict and
// rounds as an inline record's are checked.
func decodeVerdictBody(doc []byte, limit int) (VerdictBody, microjob.Verdict, error) {
	var b VerdictBody
	if err := strictjson.Decode(doc, limit, &b); err != nil {
		if errors.Is(err, strictjson.ErrTooLarge) {
			return b, microjob.Verdict{}, fmt.Errorf("%w: %w", ErrBodyTooLarge, err)
		}
		return b, microjob.Verdict{}, fmt.Errorf("%w: verdict body: %w", ErrBadRecord, err)
	}
	if again, _, err := encodeVerdictBody(b); err != nil || string(again) != string(doc) {
		return b, microjob.Verdict{}, fmt.Errorf("%w: verdict body is not canonical", ErrBadRecord)
	}
	v, err := microjob.DecodeVerdict(b.Verdict)
	if err != nil {
		return b, v, fmt.Errorf("%w: verdict body: %w", ErrBadRecord, err)
	}
	if err := CheckRounds(b.Rounds, v); err != nil {
		return b, v, err
	}
	return b, v, nil
}

// LoadVerdictRecord decodes a verdict record payload and its verdict. An
// inline record decodes as DecodeVerdictRecord does; a body record's body
// is read from blocks (at most MaxVerdictBody bytes, bounded by
// BodyFetchTimeout), its SHA-256 checked against the record, decoded and
// checked, and the returned record has Verdict and Rounds filled in.
func LoadVerdictRecord(ctx context.Context, payload []byte, blocks BodyReader) (VerdictRecord, microjob.Verdict, error) {
	return loadVerdictRecord(ctx, payload, blocks, MaxVerdictBody)
}

// loadVerdictRecord is LoadVerdictRecord with the body limit a parameter.
func loadVerdictRecord(ctx context.Context, payload []byte, blocks BodyReader, limit int) (VerdictRecord, microjob.Verdict, error) {
	var r VerdictRecord
	if err := decodeStrict(payload, &r); err != nil {
		return r, microjob.Verdict{}, err
	}
	c, err := checkBodyRef(r)
	if err != nil {
		return r, microjob.Verdict{}, err
	}
	if !c.Defined() {
		return decodeInline(r)
	}
	if blocks == nil {
		return r, microjob.Verdict{}, fmt.Errorf("%w: %w: no block layer to fetch %s", ErrBadRecord, ErrBodyNotFetched, c)
	}
	ctx, cancel := context.WithTimeout(ctx, BodyFetchTimeout)
	defer cancel()
	doc, err := readBody(ctx, blocks, c, limit)
	if err != nil {
		return r, microjob.Verdict{}, err
	}
	if sum := sha256.Sum256(doc); hex.EncodeToString(sum[:]) != r.BodySHA256 {
		return r, microjob.Verdict{}, fmt.Errorf("%w: body %s hashes to %x, record names %s", ErrBodyDigest, c, sum, r.BodySHA256)
	}
	b, v, err := decodeVerdictBody(doc, limit)
	if err != nil {
		return r, v, err
	}
	r.Verdict, r.Rounds = b.Verdict, b.Rounds
	return r, v, nil
}

// readBody reads at most limit+1 bytes of c, so an oversize body is
// refused without reading it all.
func readBody(ctx context.Context, blocks BodyReader, c cid.Cid, limit int) ([]byte, error) {
	rc, err := blocks.Cat(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBodyUnavailable, c, err)
	}
	defer rc.Close()
	doc, err := io.ReadAll(io.LimitReader(rc, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBodyUnavailable, c, err)
	}
	if len(doc) > limit {
		return nil, fmt.Errorf("%w: %s exceeds %d bytes", ErrBodyTooLarge, c, limit)
	}
	return doc, nil
}
