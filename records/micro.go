package records

import (
	"fmt"
	"strings"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
)

// Result records are per processor because several processors may
// complete the same MicroJob (after a lock expires), and the store keeps
// one value per key.

// MicroKey returns the key prefix of one MicroJob's records.
func MicroKey(job jobs.ID, macro uint64, micro jobs.ID) string {
	return MacroPrefix(job, macro) + "micro/" + micro.String()
}

// CommitKey returns the key of processor's commitment for a MicroJob.
func CommitKey(job jobs.ID, macro uint64, micro jobs.ID, processor string) string {
	return MicroKey(job, macro, micro) + "/" + CommitType + "/" + processor
}

// ResultKey returns the key of processor's disclosure for a MicroJob.
func ResultKey(job jobs.ID, macro uint64, micro jobs.ID, processor string) string {
	return MicroKey(job, macro, micro) + "/" + ResultType + "/" + processor
}

// CommitmentKey returns the key c is stored under.
func CommitmentKey(c microjob.Commitment) string {
	return CommitKey(c.JobID, c.MacroIndex, c.MicroID, c.Processor)
}

// DisclosureKey returns the key d is stored under.
func DisclosureKey(d microjob.Disclosure) string {
	return ResultKey(d.JobID, d.MacroIndex, d.MicroID, d.Processor)
}

// resultShaped reports whether key has the shape of a result-record key,
// whatever the validity of its fields.
func resultShaped(parts []string) bool {
	return len(parts) == 9 && parts[0] == "" && parts[1] == "jobs" && parts[3] == "macro" &&
		parts[5] == "micro" && (parts[7] == CommitType || parts[7] == ResultType)
}

// CheckAuthor is the reader's rule for result records: key must be a
// result-record key and author (a peer ID's text) the peer it names.
func CheckAuthor(key, author string) error {
	k, err := Parse(key)
	if err != nil {
		return err
	}
	if k.Type != CommitType && k.Type != ResultType {
		return fmt.Errorf("%w: %q is not a result-record key", ErrKey, key)
	}
	if k.Peer != author {
		return fmt.Errorf("%w: %q written by %s", ErrAuthor, key, author)
	}
	return nil
}

// ResultPolicy has the replicated store's AuthorPolicy signature: keys
// shaped like result-record keys must pass CheckAuthor; other keys are not
// its concern (AuthorPolicy installs it with the other rules).
func ResultPolicy(key string, author peer.ID) error {
	if !resultShaped(strings.Split(key, "/")) {
		return nil
	}
	return CheckAuthor(key, author.String())
}

// OpenCommitment decodes a commitment read from the store and checks that
// it was stored under its own key by its own processor.
func OpenCommitment(key, author string, payload []byte) (microjob.Commitment, error) {
	c, err := microjob.DecodeCommitment(payload)
	if err != nil {
		return microjob.Commitment{}, err
	}
	if CommitmentKey(c) != key {
		return microjob.Commitment{}, fmt.Errorf("%w: commitment for %q stored under %q", ErrKey, CommitmentKey(c), key)
	}
	if c.Processor != author {
		return microjob.Commitment{}, fmt.Errorf("%w: commitment of %s written by %s", ErrAuthor, c.Processor, author)
	}
	return c, nil
}

// OpenDisclosure is OpenCommitment for disclosures.
func OpenDisclosure(key, author string, payload []byte) (microjob.Disclosure, error) {
	d, err := microjob.DecodeDisclosure(payload)
	if err != nil {
		return microjob.Disclosure{}, err
	}
	if DisclosureKey(d) != key {
		return microjob.Disclosure{}, fmt.Errorf("%w: disclosure for %q stored under %q", ErrKey, DisclosureKey(d), key)
	}
	if d.Processor != author {
		return microjob.Disclosure{}, fmt.Errorf("%w: disclosure of %s written by %s", ErrAuthor, d.Processor, author)
	}
	return d, nil
}
