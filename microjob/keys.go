package microjob

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/jobs"
)

// Result records live in the replicated store (under its versioned
// namespace, e.g. /jobmesh/v1) at
//
//	/jobs/<jobID>/macro/<macroIndex>/micro/<microID>/commit/<peerID>   type "commit"
//	/jobs/<jobID>/macro/<macroIndex>/micro/<microID>/result/<peerID>   type "result"
//
// with IDs as 64 lowercase hex digits, the MacroJob index in decimal
// without leading zeros and the peer ID in its canonical text form. Keys
// are per processor because several processors may complete the same
// MicroJob (after a lock expires), and the store keeps one value per key.

// MicroKey returns the key prefix of one MicroJob's records.
func MicroKey(job jobs.ID, macro uint64, micro jobs.ID) string {
	return "/jobs/" + job.String() + "/macro/" + strconv.FormatUint(macro, 10) + "/micro/" + micro.String()
}

// CommitKey returns the key of processor's commitment for a MicroJob.
func CommitKey(job jobs.ID, macro uint64, micro jobs.ID, processor string) string {
	return MicroKey(job, macro, micro) + "/" + TypeCommit + "/" + processor
}

// ResultKey returns the key of processor's disclosure for a MicroJob.
func ResultKey(job jobs.ID, macro uint64, micro jobs.ID, processor string) string {
	return MicroKey(job, macro, micro) + "/" + TypeResult + "/" + processor
}

// Key returns the key c is stored under.
func (c Commitment) Key() string { return CommitKey(c.JobID, c.MacroIndex, c.MicroID, c.Processor) }

// Key returns the key d is stored under.
func (d Disclosure) Key() string { return ResultKey(d.JobID, d.MacroIndex, d.MicroID, d.Processor) }

// RecordKey is a parsed result-record key.
type RecordKey struct {
	JobID      jobs.ID
	MacroIndex uint64
	MicroID    jobs.ID
	Type       string // TypeCommit or TypeResult
	Processor  string // canonical peer ID text
}

// String returns the key text.
func (k RecordKey) String() string {
	return MicroKey(k.JobID, k.MacroIndex, k.MicroID) + "/" + k.Type + "/" + k.Processor
}

// recordShaped reports whether key has the shape of a result-record key,
// whatever the validity of its fields.
func recordShaped(parts []string) bool {
	return len(parts) == 9 && parts[0] == "" && parts[1] == "jobs" && parts[3] == "macro" &&
		parts[5] == "micro" && (parts[7] == TypeCommit || parts[7] == TypeResult)
}

// ParseKey parses a result-record key (ErrKey if it is not one, in its
// one canonical form).
func ParseKey(key string) (RecordKey, error) {
	parts := strings.Split(key, "/")
	if !recordShaped(parts) {
		return RecordKey{}, fmt.Errorf("%w: %q", ErrKey, key)
	}
	var k RecordKey
	var err error
	if k.JobID, err = jobs.ParseHash(parts[2]); err != nil {
		return RecordKey{}, fmt.Errorf("%w: %q: job: %v", ErrKey, key, err)
	}
	if k.MacroIndex, err = strconv.ParseUint(parts[4], 10, 64); err != nil {
		return RecordKey{}, fmt.Errorf("%w: %q: macro: %v", ErrKey, key, err)
	}
	if k.MicroID, err = jobs.ParseHash(parts[6]); err != nil {
		return RecordKey{}, fmt.Errorf("%w: %q: micro: %v", ErrKey, key, err)
	}
	k.Type = parts[7]
	k.Processor = parts[8]
	if err := checkPeer(k.Processor); err != nil {
		return RecordKey{}, fmt.Errorf("%w: %q: %w", ErrKey, key, err)
	}
	if k.String() != key {
		return RecordKey{}, fmt.Errorf("%w: %q is not canonical", ErrKey, key)
	}
	return k, nil
}

// CheckAuthor is the reader's rule for result records: key must be a
// result-record key and author (a peer ID's text) the peer it names.
func CheckAuthor(key, author string) error {
	k, err := ParseKey(key)
	if err != nil {
		return err
	}
	if k.Processor != author {
		return fmt.Errorf("%w: %q written by %s", ErrAuthor, key, author)
	}
	return nil
}

// AuthorPolicy has the replicated store's AuthorPolicy signature, so the
// wiring can install it (alone or beside crdt.OwnerPolicy): keys shaped like
// result-record keys must pass CheckAuthor; other keys are not its concern.
func AuthorPolicy(key string, author peer.ID) error {
	if !recordShaped(strings.Split(key, "/")) {
		return nil
	}
	return CheckAuthor(key, author.String())
}

// OpenCommitment decodes a commitment read from the store and checks that
// it was stored under its own key by its own processor.
func OpenCommitment(key, author string, payload []byte) (Commitment, error) {
	c, err := DecodeCommitment(payload)
	if err != nil {
		return Commitment{}, err
	}
	if c.Key() != key {
		return Commitment{}, fmt.Errorf("%w: commitment for %q stored under %q", ErrKey, c.Key(), key)
	}
	if c.Processor != author {
		return Commitment{}, fmt.Errorf("%w: commitment of %s written by %s", ErrAuthor, c.Processor, author)
	}
	return c, nil
}

// OpenDisclosure is OpenCommitment for disclosures.
func OpenDisclosure(key, author string, payload []byte) (Disclosure, error) {
	d, err := DecodeDisclosure(payload)
	if err != nil {
		return Disclosure{}, err
	}
	if d.Key() != key {
		return Disclosure{}, fmt.Errorf("%w: disclosure for %q stored under %q", ErrKey, d.Key(), key)
	}
	if d.Processor != author {
		return Disclosure{}, fmt.Errorf("%w: disclosure of %s written by %s", ErrAuthor, d.Processor, author)
	}
	return d, nil
}
