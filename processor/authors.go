package processor

import (
	"bytes"
	"slices"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// Who may write the records that decide a job's outcome, and which of
// several counts. Verdicts, disputes, checks and redos are written by the
// job's finalizers: the processors with a disclosure in the job that the
// judgement does not name culprit (finalizerOrder). Each lives under its
// author's key, so several can stand for one block or MicroJob; readers
// keep one by the rules below, which use nothing but the records, so that
// every replica holding the same records keeps the same one.
//
// Eligibility is well-founded although culprits come from judging and
// judging reads the disputes and checks: judge starts from the
// processors with a disclosure (known before any request is read) and
// nobody excluded; each round accepts only requests by eligible authors
// that are not excluded yet, and a culprit found in a round is excluded
// from the next. The excluded set only grows and is bounded by the
// processors, so the rounds end, and they run in the same order on every
// replica.
//
// Among several eligible requests for one block the one kept is the
// highest-ranked (finalizer hash) of those that no other supersedes. A
// request supersedes another when it replaces its silent re-runners: its
// dropped list is a strict superset of the other's and names every
// re-runner of the other that it does not keep, and none of those it
// newly drops has re-run the block. A takeover finalizer's replacement so
// wins over the stopped finalizer's request, and a peer that "drops"
// re-runners that did answer supersedes nothing.

// authored is one record with its key, author and seq.
type authored[T any] struct {
	key    string
	author string
	seq    uint64
	rec    T
}

// request is one dispute, check or redo record, opened: exactly one of
// dispute, check and redo is set.
type request struct {
	key     string
	author  string
	seq     uint64
	dispute *records.Dispute
	check   *records.Check
	redo    *records.Redo
}

// kind is the request's record type.
func (r *request) kind() string {
	switch {
	case r.dispute != nil:
		return records.DisputeType
	case r.check != nil:
		return records.CheckType
	}
	return records.RedoType
}

// openRequest opens a dispute, check or redo record of job id; nil when
// it does not decode or is not under the key its content and author name.
func openRequest(id jobs.ID, r crdt.Record) *request {
	author := r.Author.String()
	q := &request{key: r.Key, author: author, seq: r.Seq}
	switch r.Type {
	case records.DisputeType:
		d, err := records.DecodeDispute(r.Payload)
		if err != nil || records.DisputeKey(id, d.Dispute.Block, author) != r.Key {
			return nil
		}
		q.dispute = &d
	case records.CheckType:
		c, err := records.DecodeCheck(r.Payload)
		if err != nil || records.CheckKey(id, c.Block, author) != r.Key {
			return nil
		}
		q.check = &c
	case records.RedoType:
		rd, err := records.DecodeRedo(r.Payload)
		if err != nil {
			return nil
		}
		m, err := jobs.ParseHash(rd.Micro)
		if err != nil || records.RedoKey(id, m, author) != r.Key {
			return nil
		}
		q.redo = &rd
	default:
		return nil
	}
	return q
}

// Reasons a record is refused (metric label reason).
const (
	refusedAuthor    = "author"    // not a processor with a disclosure in the job
	refusedCulprit   = "culprit"   // its author is a culprit
	refusedContent   = "content"   // its content breaks a rule readers check
	refusedDisagrees = "disagrees" // a verdict that does not follow from the reader's records
)

// refusal is one record a judgement refused, and why.
type refusal struct {
	key, kind, reason string
	seq               uint64
}

// finalizerRank is author's place among job id's finalizers: the higher,
// the earlier (finalizerOrder).
func finalizerRank(id jobs.ID, author string) [32]byte {
	return records.FinalizerRank(id, author)
}

// disclosers are the processors with a disclosure in recs.
func (recs *jobRecords) disclosers() map[string]bool {
	out := map[string]bool{}
	for _, d := range recs.discl {
		out[d.Processor] = true
	}
	return out
}

// rerunners are the processors a dispute or check asks to re-run, and
// those it dropped.
func (r *request) rerunners() (thirds, dropped []string) {
	if r.dispute != nil {
		return []string{r.dispute.Third}, r.dispute.Dropped
	}
	return r.check.Thirds[:], r.check.Dropped
}

// block is the block a dispute or check is about.
func (r *request) block() uint64 {
	if r.dispute != nil {
		return r.dispute.Dispute.Block
	}
	return r.check.Block
}

// supersedes reports whether request x replaces y (see above).
func supersedes(recs *jobRecords, x, y *request) bool {
	xThirds, xDropped := x.rerunners()
	yThirds, yDropped := y.rerunners()
	if len(xDropped) <= len(yDropped) {
		return false
	}
	for _, p := range yDropped {
		if !slices.Contains(xDropped, p) {
			return false
		}
	}
	for _, p := range yThirds {
		if !slices.Contains(xThirds, p) && !slices.Contains(xDropped, p) {
			return false
		}
	}
	for _, p := range xDropped {
		if !slices.Contains(yDropped, p) && hasRerun(recs, x.block(), p) {
			return false
		}
	}
	return true
}

// pick returns the request kept among cands (see above): the
// highest-ranked of those no other supersedes.
func pick(id jobs.ID, recs *jobRecords, cands []*request) *request {
	var best *request
	var bestRank [32]byte
	for _, c := range cands {
		if slices.ContainsFunc(cands, func(o *request) bool { return o != c && supersedes(recs, o, c) }) {
			continue
		}
		if r := finalizerRank(id, c.author); best == nil || bytes.Compare(r[:], bestRank[:]) > 0 {
			best, bestRank = c, r
		}
	}
	return best
}

// accept returns recs with the disputes and checks by authors that
// eligible admits and that keep the content rules, one per block (pick).
// The result shares everything else with recs.
func (recs *jobRecords) accept(id jobs.ID, eligible func(author string) bool) *jobRecords {
	out := *recs
	out.dispute, out.checks, out.redo = map[uint64]records.Dispute{}, map[uint64]records.Check{}, map[string]records.Redo{}
	byBlock := map[string]map[uint64][]*request{records.DisputeType: {}, records.CheckType: {}}
	for i := range recs.requests {
		q := &recs.requests[i]
		switch {
		case q.redo != nil || !eligible(q.author):
		case q.dispute != nil && q.dispute.Valid(), q.check != nil && q.check.Valid():
			byBlock[q.kind()][q.block()] = append(byBlock[q.kind()][q.block()], q)
		}
	}
	for block, cands := range byBlock[records.DisputeType] {
		out.dispute[block] = *pick(id, recs, cands).dispute
	}
	for block, cands := range byBlock[records.CheckType] {
		out.checks[block] = *pick(id, recs, cands).check
	}
	return &out
}

// acceptRedos fills acc's redos: by authors eligible admits, for a
// MicroJob of plan, excluding only culprits and processors that committed
// that MicroJob (a silent committer's MicroJob is redone without it); the
// highest-ranked author's per MicroJob.
func (acc *jobRecords) acceptRedos(plan *jobs.Plan, culprits []string, eligible func(author string) bool) {
	committers := map[string][]string{}
	for _, c := range acc.commits {
		committers[c.MicroID.String()] = append(committers[c.MicroID.String()], c.Processor)
	}
	best := map[string][32]byte{}
	for i := range acc.requests {
		q := &acc.requests[i]
		if q.redo == nil || !eligible(q.author) || !validRedo(plan, q.redo, culprits, committers[q.redo.Micro]) {
			continue
		}
		r := finalizerRank(plan.JobID, q.author)
		if b, ok := best[q.redo.Micro]; !ok || bytes.Compare(r[:], b[:]) > 0 {
			best[q.redo.Micro] = r
			acc.redo[q.redo.Micro] = *q.redo
		}
	}
}

// validRedo reports whether rd asks for a MicroJob of plan and excludes
// only culprits and the MicroJob's committers.
func validRedo(plan *jobs.Plan, rd *records.Redo, culprits, committers []string) bool {
	m, err := jobs.ParseHash(rd.Micro)
	if err != nil {
		return false
	}
	if _, err := plan.MicroJob(m); err != nil {
		return false
	}
	for _, p := range rd.Exclude {
		if !slices.Contains(culprits, p) && !slices.Contains(committers, p) {
			return false
		}
	}
	return true
}

// refusals lists the requests in acc that a judgement with culprits
// refuses outright: by an author without a disclosure, by a culprit, or
// breaking a content rule. (A request passed over for another is not
// refused.)
func (acc *jobRecords) refusals(plan *jobs.Plan, disclosers map[string]bool, culprits []string) []refusal {
	committers := map[string][]string{}
	for _, c := range acc.commits {
		committers[c.MicroID.String()] = append(committers[c.MicroID.String()], c.Processor)
	}
	var out []refusal
	for _, q := range acc.requests {
		reason := ""
		switch {
		case !disclosers[q.author]:
			reason = refusedAuthor
		case slices.Contains(culprits, q.author):
			reason = refusedCulprit
		case q.dispute != nil && !q.dispute.Valid(), q.check != nil && !q.check.Valid(),
			q.redo != nil && !validRedo(plan, q.redo, culprits, committers[q.redo.Micro]):
			reason = refusedContent
		default:
			continue
		}
		out = append(out, refusal{key: q.key, kind: q.kind(), reason: reason, seq: q.seq})
	}
	return out
}
