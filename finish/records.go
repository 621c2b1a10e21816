package finish

import (
	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// Authored is one record with its key, author and seq.
type Authored[T any] struct {
	Key    string
	Author string
	Seq    uint64
	Rec    T
}

// Records are the result records of one job, checked.
type Records struct {
	Commits []microjob.Commitment
	Discl   []microjob.Disclosure
	Reruns  map[uint64][]records.Rerun // by block
	// Dispute, Checks and Redo are the requests a judgement accepted
	// (authors.go: one per block or MicroJob, from an eligible author);
	// empty in the records as read, which hold every request in Requests.
	Dispute map[uint64]records.Dispute // by block
	Checks  map[uint64]records.Check   // self-checked blocks' re-run requests, by block
	Redo    map[string]records.Redo    // by MicroJob
	// Requests are the dispute, check and redo records as read, of every
	// author; Verdicts the verdict records.
	Requests []Request
	Verdicts []Authored[[]byte]
	// Candidates are the processors this reader holds eligible to re-run a
	// block, with the keys they rank by: a dispute or check must ask a
	// prefix of its block's rerun order over them (RerunOrder). Nil checks no order: only a
	// reader without a view of the mesh (a test, a diagnosis) leaves it so.
	Candidates []Candidate

	// Took are the took records: the evidence that a processor took
	// MicroJobs of a MacroJob (the verdict's lockers).
	Took []Took

	// CommitSeqs and DisclSeqs are the record seqs of Commits and Discl,
	// index for index (the verdict's rounds are ordered by them).
	CommitSeqs, DisclSeqs []uint64

	// Reveals are the reveal records of the job's check seed, as read:
	// whether one counts is ChooseChecks' question.
	Reveals []Authored[[]byte]

	Proposal *escrow.Settlement        // the proposed settlement
	Sigs     []escrow.SignedSettlement // payees' signatures, checked
	Settled  bool                      // a settled record exists
}

// Took is one took record: Processor (its author, named by its key) took
// MicroJobs of MacroJob Macro; Seq is the record's seq.
type Took struct {
	Macro     uint64
	Processor string
	Seq       uint64
}

// NewRecords returns an empty snapshot, ready for Add.
func NewRecords() *Records {
	return &Records{Reruns: map[uint64][]records.Rerun{}, Dispute: map[uint64]records.Dispute{}, Checks: map[uint64]records.Check{}, Redo: map[string]records.Redo{}}
}

// Part is one record of a job, opened and checked: at most one of its
// fields is set (Rec is always), or none for a record that does not
// belong where it is.
type Part struct {
	Rec     crdt.Record
	Commit  *microjob.Commitment
	Discl   *microjob.Disclosure
	Rerun   *records.Rerun
	Request *Request
	Took    *Took
	Verdict bool
	Reveal  bool
}

// OpenPart opens one record of job id. A dispute, check, redo or verdict
// is kept only under its author's key (AuthorPolicy refuses the others
// before this) and where its content says it belongs; which of them
// count is the judgement's choice (authors.go).
func OpenPart(id jobs.ID, r crdt.Record) Part {
	p := Part{Rec: r}
	author := r.AuthorText()
	switch r.Type {
	case records.CommitType:
		if c, err := records.OpenCommitment(r.Key, author, r.Payload); err == nil && c.JobID == id {
			p.Commit = &c
		}
	case records.ResultType:
		if d, err := records.OpenDisclosure(r.Key, author, r.Payload); err == nil && d.JobID == id {
			p.Discl = &d
		}
	case records.RerunType:
		if rr, err := records.DecodeRerun(r.Payload); err == nil && rr.Processor == author && records.RerunKey(id, rr.Block, author) == r.Key {
			p.Rerun = &rr
		}
	case records.DisputeType, records.CheckType, records.RedoType:
		p.Request = openRequest(id, r)
	case records.TookType:
		p.Took = openTook(id, r)
	case records.VerdictType:
		p.Verdict = r.Key == records.VerdictKey(id, author)
	case records.RevealType:
		p.Reveal = r.Key == records.RevealKey(id, author)
	}
	return p
}

// openTook opens a took record of job id: kept only under its author's
// key and empty, as TookKey's writer leaves it.
func openTook(id jobs.ID, r crdt.Record) *Took {
	k, err := records.Parse(r.Key)
	if err != nil || k.Type != records.TookType || k.Job != id || k.Peer != r.AuthorText() || len(r.Payload) != 0 {
		return nil
	}
	return &Took{Macro: k.Macro, Processor: k.Peer, Seq: r.Seq}
}

// Add adds one opened record.
func (out *Records) Add(id jobs.ID, p Part) {
	switch {
	case p.Commit != nil:
		out.Commits = append(out.Commits, *p.Commit)
		out.CommitSeqs = append(out.CommitSeqs, p.Rec.Seq)
	case p.Discl != nil:
		out.Discl = append(out.Discl, *p.Discl)
		out.DisclSeqs = append(out.DisclSeqs, p.Rec.Seq)
	case p.Took != nil:
		out.Took = append(out.Took, *p.Took)
	case p.Rerun != nil:
		out.Reruns[p.Rerun.Block] = append(out.Reruns[p.Rerun.Block], *p.Rerun)
	case p.Request != nil:
		out.Requests = append(out.Requests, *p.Request)
	case p.Verdict:
		out.Verdicts = append(out.Verdicts, Authored[[]byte]{Key: p.Rec.Key, Author: p.Rec.AuthorText(), Seq: p.Rec.Seq, Rec: p.Rec.Payload})
	case p.Reveal:
		out.Reveals = append(out.Reveals, Authored[[]byte]{Key: p.Rec.Key, Author: p.Rec.AuthorText(), Seq: p.Rec.Seq, Rec: p.Rec.Payload})
	default:
		out.addSettlement(id, p.Rec.Key, p.Rec.AuthorText(), p.Rec.Type, p.Rec.Payload)
	}
}

// Undisclosed counts commitments whose processor has not disclosed that
// MicroJob yet.
func Undisclosed(recs *Records) int {
	type key struct {
		micro jobs.ID
		proc  string
	}
	disclosed := map[key]bool{}
	for _, d := range recs.Discl {
		disclosed[key{d.MicroID, d.Processor}] = true
	}
	n := 0
	for _, c := range recs.Commits {
		if !disclosed[key{c.MicroID, c.Processor}] {
			n++
		}
	}
	return n
}

// addSettlement keeps the settlement records of job id that are where
// they belong and decode; Add calls it. A settlement names the job by
// its escrow key, which the processor's settlement view checks by comparing each with the
// settlement it derives itself.
func (out *Records) addSettlement(id jobs.ID, key, author string, typ string, payload []byte) {
	switch typ {
	case records.SettlementType:
		if key != records.SettlementKey(id) {
			return
		}
		if s, err := records.DecodeSettlementRecord(payload); err == nil {
			out.Proposal = &s
		}
	case records.SignatureType:
		if key != records.SignatureKey(id, author) {
			return
		}
		if s, err := records.DecodeSignatureRecord(payload); err == nil {
			out.Sigs = append(out.Sigs, s)
		}
	case records.SettledType:
		if key != records.SettledKey(id) {
			return
		}
		if _, err := records.DecodeSettledRecord(payload, author); err == nil {
			out.Settled = true
		}
	}
}

// Judged reports whether a judgement or a verdict's agreement reads p.
func (p Part) Judged() bool {
	return p.Commit != nil || p.Discl != nil || p.Took != nil || p.Rerun != nil || p.Verdict || p.Reveal || p.Request != nil && p.Request.Redo == nil
}

// FromRecords is the snapshot of job id's records as read (a query of
// records.JobKey(id) + "/"), every disclosure counting: each record
// opened (OpenPart) and added, tombstones left out.
func FromRecords(id jobs.ID, rs []crdt.Record) *Records {
	out := NewRecords()
	for _, r := range rs {
		if !r.Tombstone {
			out.Add(id, OpenPart(id, r))
		}
	}
	return out
}
