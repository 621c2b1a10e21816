package probe

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jobmesh/jobmesh/internal/strictjson"
)

// Prefix is the store prefix of every probe record.
const Prefix = "/probes"

// Record types of the probe records.
const (
	ChallengeType = "probe"
	CommitType    = "probe-commit"
	ResultType    = "probe-result"
)

// Size limits of the probe payloads.
const (
	// MaxChallenge bounds a challenge payload: a window and three peer
	// IDs.
	MaxChallenge = 1 << 10
	// MaxAnswer bounds a commitment or result payload: one hex digest.
	MaxAnswer = 256
	// MaxIDLen bounds a peer ID in a key or a challenge.
	MaxIDLen = 128
)

// ErrBadRecord is wrapped by every decoding error of a probe key or
// payload.
var ErrBadRecord = errors.New("probe: bad record")

// Kind says which probe record a key names.
type Kind string

const (
	KindChallenge Kind = "challenge"
	KindCommit    Kind = "commit"
	KindResult    Kind = "result"
)

// Key is a parsed probe key.
type Key struct {
	Window     uint64
	Challenger string
	Kind       Kind
	// Member is the answering member (commit and result keys only).
	Member string
}

// Author is the only peer that may write the record.
func (k Key) Author() string {
	if k.Kind == KindChallenge {
		return k.Challenger
	}
	return k.Member
}

// ChallengeKey is /probes/<w>/<p>.
func ChallengeKey(w uint64, p string) string {
	return Prefix + "/" + strconv.FormatUint(w, 10) + "/" + p
}

// WindowPrefix is the prefix of every probe record of window w.
func WindowPrefix(w uint64) string { return Prefix + "/" + strconv.FormatUint(w, 10) + "/" }

// CommitKey is /probes/<w>/<p>/commit/<q>.
func CommitKey(w uint64, p, q string) string { return ChallengeKey(w, p) + "/commit/" + q }

// ResultKey is /probes/<w>/<p>/result/<q>.
func ResultKey(w uint64, p, q string) string { return ChallengeKey(w, p) + "/result/" + q }

// ParseKey parses a key under Prefix.
func ParseKey(key string) (Key, error) {
	rest, ok := strings.CutPrefix(key, Prefix+"/")
	if !ok {
		return Key{}, fmt.Errorf("%w: %q is not under %s", ErrBadRecord, key, Prefix)
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 2 && len(parts) != 4 {
		return Key{}, fmt.Errorf("%w: key %q has %d segments", ErrBadRecord, key, len(parts))
	}
	w, err := strconv.ParseUint(parts[0], 10, 64)
	if err != nil || strconv.FormatUint(w, 10) != parts[0] {
		return Key{}, fmt.Errorf("%w: key %q: bad window", ErrBadRecord, key)
	}
	k := Key{Window: w, Challenger: parts[1], Kind: KindChallenge}
	if len(parts) == 4 {
		k.Kind, k.Member = Kind(parts[2]), parts[3]
		if k.Kind != KindCommit && k.Kind != KindResult {
			return Key{}, fmt.Errorf("%w: key %q: kind %q", ErrBadRecord, key, parts[2])
		}
		if !validID(k.Member) {
			return Key{}, fmt.Errorf("%w: key %q: bad member", ErrBadRecord, key)
		}
	}
	if !validID(k.Challenger) {
		return Key{}, fmt.Errorf("%w: key %q: bad challenger", ErrBadRecord, key)
	}
	return k, nil
}

func validID(id string) bool {
	return id != "" && len(id) <= MaxIDLen && !strings.ContainsAny(id, "/ ")
}

// Challenge is a challenge record's payload: the window and the group,
// challenger first.
type Challenge struct {
	Window  uint64   `json:"window"`
	Members []string `json:"members"`
}

// Validate checks the group's shape: 1 to MaxGroup distinct members, the
// challenger first.
func (c Challenge) Validate(challenger string) error {
	if len(c.Members) < 1 || len(c.Members) > MaxGroup {
		return fmt.Errorf("%w: %d members, want 1 to %d", ErrBadRecord, len(c.Members), MaxGroup)
	}
	if c.Members[0] != challenger {
		return fmt.Errorf("%w: first member %q is not the challenger", ErrBadRecord, c.Members[0])
	}
	for i, m := range c.Members {
		if !validID(m) {
			return fmt.Errorf("%w: bad member id", ErrBadRecord)
		}
		for _, o := range c.Members[:i] {
			if o == m {
				return fmt.Errorf("%w: member %s named twice", ErrBadRecord, m)
			}
		}
	}
	return nil
}

// DecodeChallenge decodes a challenge payload and checks its members'
// IDs (Validate with the key's challenger checks the rest).
func DecodeChallenge(b []byte) (Challenge, error) {
	var c Challenge
	if err := strictjson.Decode(b, MaxChallenge, &c); err != nil {
		return Challenge{}, fmt.Errorf("%w: challenge: %w", ErrBadRecord, err)
	}
	if len(c.Members) == 0 {
		return Challenge{}, fmt.Errorf("%w: challenge without members", ErrBadRecord)
	}
	return c, c.Validate(c.Members[0])
}

// Answer is the payload of a commitment (H(digest || member)) or a result
// (the output digest): one lowercase hex SHA-256.
type Answer struct {
	Hash string `json:"hash"`
}

// NewAnswer returns the payload for h.
func NewAnswer(h [32]byte) Answer { return Answer{Hash: hex.EncodeToString(h[:])} }

// DecodeAnswer decodes a commitment or result payload.
func DecodeAnswer(b []byte) ([32]byte, error) {
	var a Answer
	if err := strictjson.Decode(b, MaxAnswer, &a); err != nil {
		return [32]byte{}, fmt.Errorf("%w: answer: %w", ErrBadRecord, err)
	}
	var h [32]byte
	raw, err := hex.DecodeString(a.Hash)
	if err != nil || len(raw) != len(h) || hex.EncodeToString(raw) != a.Hash {
		return [32]byte{}, fmt.Errorf("%w: answer hash %q is not lowercase hex SHA-256", ErrBadRecord, a.Hash)
	}
	copy(h[:], raw)
	return h, nil
}
