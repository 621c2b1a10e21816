package settlement

import (
	"context"
	"errors"
	"fmt"

	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// ErrSummaryMismatch: an outcome summary says something else than the
// job's settlement on chain.
var ErrSummaryMismatch = errors.New("settlement: summary does not match the chain")

// CheckSummary checks an outcome summary against the job's release on
// chain: a settled summary, naming the settle transaction, whose output
// is the released resultRoot and whose verdict digest, rounds and
// culprits hash to the released verifierHash (records.OutcomeDigest).
// The quorum that signed the settlement recomputed those from the job's
// records, so a summary that passes is what the quorum vouched for, and a
// writer cannot add a locker (a timeout in every QoS ledger), name a
// culprit or change a submission order without failing here.
func CheckSummary(s records.SummaryRecord, rel *escrow.Release) error {
	if rel == nil {
		return fmt.Errorf("%w: the job is not released", ErrSummaryMismatch)
	}
	if s.State != records.SummarySettled || s.Tx != rel.TxHash.Hex() || s.Block != rel.Block {
		return fmt.Errorf("%w: summary %s in tx %s at block %d, released in %s at block %d",
			ErrSummaryMismatch, s.State, s.Tx, s.Block, rel.TxHash.Hex(), rel.Block)
	}
	out, err := cid.Decode(s.Output)
	if err != nil || records.ResultRoot(out) != rel.ResultRoot {
		return fmt.Errorf("%w: output %s is not the released result root %s", ErrSummaryMismatch, s.Output, rel.ResultRoot)
	}
	if d := s.Digest(); d != rel.VerifierHash {
		return fmt.Errorf("%w: verdict, rounds and culprits hash to %s, released %s", ErrSummaryMismatch, d, rel.VerifierHash)
	}
	return nil
}

// ReadSummary returns a summary of job id that passes CheckSummary
// against its release rel, from the summaries store holds (one per
// writer); ok is false when none does.
func ReadSummary(ctx context.Context, store finish.RecordReader, id jobs.ID, rel *escrow.Release) (records.SummaryRecord, bool, error) {
	recs, err := store.Query(ctx, records.SummaryPrefix(id))
	if err != nil {
		return records.SummaryRecord{}, false, err
	}
	s, ok := CheckedSummary(id, recs, rel)
	return s, ok, nil
}

// CheckedSummary returns, of recs (the records under
// records.SummaryPrefix(id)), a summary that passes CheckSummary against
// rel; ok is false when none does. Summaries that do not decode or do not
// check are skipped: anyone may write one under its own key.
func CheckedSummary(id jobs.ID, recs []crdt.Record, rel *escrow.Release) (records.SummaryRecord, bool) {
	for _, r := range recs {
		if r.Tombstone || r.Type != records.SummaryType || r.Key != records.SummaryKey(id, r.AuthorText()) {
			continue
		}
		s, err := records.DecodeSummaryRecord(r.Payload)
		if err != nil {
			continue
		}
		if CheckSummary(s, rel) == nil {
			return s, true
		}
	}
	return records.SummaryRecord{}, false
}
