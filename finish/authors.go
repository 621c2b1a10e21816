package finish

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
// judgement does not name culprit, or, when every one that disclosed is a
// culprit, those that re-ran one of its blocks (Finalizers). Each lives under its
// author's key, so several can stand for one block or MicroJob; readers
// keep one by the rules below, which use nothing but the records, so that
// every replica holding the same records keeps the same one.
//
// Eligibility is well-founded although culprits come from judging and
// judging reads the disputes and checks: Judge starts from the
// processors with a disclosure (known before any request is read) and
// nobody excluded; each round accepts only requests by eligible authors
// that are not excluded yet, and a culprit found in a round is excluded
// from the next. The excluded set only grows and is bounded by the
// processors, so the rounds end, and they run in the same order on every
// replica.
//
// Among several eligible requests for one block the one kept is the
// highest-ranked (finalizer hash) of those that no other supersedes. A
// request supersedes another when it replaces its silent re-runners or
// extends its draw (escalate.go): its dropped list holds the other's, it
// keeps or drops every re-runner of the other, it drops more, names more
// re-runners in all, or says the pool is exhausted where the other does
// not, and none
// of those it newly drops has re-run the block. A takeover finalizer's
// replacement or next round so wins over the stopped finalizer's request,
// and a peer that "drops" re-runners that did answer supersedes nothing.

// Request is one dispute, check or redo record, opened: exactly one of
// dispute, check and redo is set.
type Request struct {
	Key     string
	Author  string
	Seq     uint64
	Dispute *records.Dispute
	Check   *records.Check
	Redo    *records.Redo
}

// Kind is the request's record type.
func (r *Request) Kind() string {
	switch {
	case r.Dispute != nil:
		return records.DisputeType
	case r.Check != nil:
		return records.CheckType
	}
	return records.RedoType
}

// openRequest opens a dispute, check or redo record of job id; nil when
// it does not decode or is not under the key its content and author name.
func openRequest(id jobs.ID, r crdt.Record) *Request {
	author := r.AuthorText()
	q := &Request{Key: r.Key, Author: author, Seq: r.Seq}
	switch r.Type {
	case records.DisputeType:
		d, err := records.DecodeDispute(r.Payload)
		if err != nil || records.DisputeKey(id, d.Dispute.Block, author) != r.Key {
			return nil
		}
		q.Dispute = &d
	case records.CheckType:
		c, err := records.DecodeCheck(r.Payload)
		if err != nil || records.CheckKey(id, c.Block, author) != r.Key {
			return nil
		}
		q.Check = &c
	case records.RedoType:
		rd, err := records.DecodeRedo(r.Payload)
		if err != nil {
			return nil
		}
		m, err := jobs.ParseHash(rd.Micro)
		if err != nil || records.RedoKey(id, m, author) != r.Key {
			return nil
		}
		q.Redo = &rd
	default:
		return nil
	}
	return q
}

// Reasons a record is refused (metric label reason).
const (
	RefusedAuthor    = "author"    // not one of the job's finalizers (Finalizers)
	RefusedCulprit   = "culprit"   // its author is a culprit
	RefusedContent   = "content"   // its content breaks a rule readers check
	RefusedOrder     = "order"     // a dispute or check that skips its block's rerun order
	RefusedDisagrees = "disagrees" // a verdict that does not follow from the reader's records
)

// Refusal is one record a judgement refused, and why.
type Refusal struct {
	Key, Kind, Reason string
	Seq               uint64
}

// Rank is author's place among job id's finalizers: the higher, the
// earlier (FinalizerOrder).
func Rank(id jobs.ID, author string) [32]byte { return records.FinalizerRank(id, author) }

// Disclosers are the processors with a disclosure in recs.
func (recs *Records) Disclosers() map[string]bool {
	out := map[string]bool{}
	for _, d := range recs.Discl {
		out[d.Processor] = true
	}
	return out
}

// Rerunners are the processors a dispute or check asks to re-run, and
// those it dropped.
func (r *Request) Rerunners() (thirds, dropped []string) {
	if r.Dispute != nil {
		return DisputeRerunners(*r.Dispute), r.Dispute.Dropped
	}
	return CheckRerunners(*r.Check), r.Check.Dropped
}

// Block is the block a dispute or check is about.
func (r *Request) Block() uint64 {
	if r.Dispute != nil {
		return r.Dispute.Dispute.Block
	}
	return r.Check.Block
}

// supersedes reports whether request x replaces y (see above).
func supersedes(recs *Records, x, y *Request) bool {
	xThirds, xDropped := x.Rerunners()
	yThirds, yDropped := y.Rerunners()
	grows := len(xDropped) > len(yDropped) || len(xThirds)+len(xDropped) > len(yThirds)+len(yDropped) ||
		x.exhausted() && !y.exhausted()
	if !grows {
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
		if !slices.Contains(yDropped, p) && HasRerun(recs, x.Block(), p) {
			return false
		}
	}
	return true
}

// ordered reports whether q, a dispute or check, asks a prefix of its
// block's rerun order over recs.Candidates (validOrder); a redo, and any
// request when recs has no candidates, is.
func (recs *Records) ordered(id jobs.ID, q *Request) bool {
	return q.Redo != nil || recs.Candidates == nil || validOrder(id, q, recs.Candidates)
}

// exhausted reports whether the request says no re-runner is left to draw.
func (r *Request) exhausted() bool {
	if r.Dispute != nil {
		return r.Dispute.Exhausted
	}
	return r.Check.Exhausted
}

// pick returns the request kept among cands (see above): the
// highest-ranked of those no other supersedes.
func pick(id jobs.ID, recs *Records, cands []*Request) *Request {
	var best *Request
	var bestRank [32]byte
	for _, c := range cands {
		if slices.ContainsFunc(cands, func(o *Request) bool { return o != c && supersedes(recs, o, c) }) {
			continue
		}
		if r := Rank(id, c.Author); best == nil || bytes.Compare(r[:], bestRank[:]) > 0 {
			best, bestRank = c, r
		}
	}
	return best
}

// Accept returns recs with the disputes and checks by authors that
// eligible admits and that keep the content rules, one per block (pick).
// The result shares everything else with recs.
func (recs *Records) Accept(id jobs.ID, eligible func(author string) bool) *Records {
	out := *recs
	out.Dispute, out.Checks, out.Redo = map[uint64]records.Dispute{}, map[uint64]records.Check{}, map[string]records.Redo{}
	byBlock := map[string]map[uint64][]*Request{records.DisputeType: {}, records.CheckType: {}}
	for i := range recs.Requests {
		q := &recs.Requests[i]
		switch {
		case q.Redo != nil || !eligible(q.Author):
		case recs.ordered(id, q) && (q.Dispute != nil && validDispute(*q.Dispute) || q.Check != nil && validCheck(*q.Check)):
			byBlock[q.Kind()][q.Block()] = append(byBlock[q.Kind()][q.Block()], q)
		}
	}
	for block, cands := range byBlock[records.DisputeType] {
		out.Dispute[block] = *pick(id, recs, cands).Dispute
	}
	for block, cands := range byBlock[records.CheckType] {
		out.Checks[block] = *pick(id, recs, cands).Check
	}
	return &out
}

// acceptRedos fills acc's redos: by authors eligible admits, for a
// MicroJob of plan, excluding only culprits and processors that committed
// that MicroJob (a silent committer's MicroJob is redone without it); one
// per MicroJob, excluding everyone some accepted redo of it excludes, so
// that a redo asked again once another culprit is named (Decide) counts
// whichever finalizer asked first.
func (acc *Records) acceptRedos(plan *jobs.Plan, culprits []string, eligible func(author string) bool) {
	committers := map[string][]string{}
	for _, c := range acc.Commits {
		committers[c.MicroID.String()] = append(committers[c.MicroID.String()], c.Processor)
	}
	for i := range acc.Requests {
		q := &acc.Requests[i]
		if q.Redo == nil || !eligible(q.Author) || !validRedo(plan, q.Redo, culprits, committers[q.Redo.Micro]) {
			continue
		}
		rd := records.Redo{Micro: q.Redo.Micro, Exclude: union(acc.Redo[q.Redo.Micro].Exclude, q.Redo.Exclude)}
		acc.Redo[q.Redo.Micro] = rd
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
// refuses outright: by an author that is not a finalizer, by a culprit, or
// breaking a content rule. (A request passed over for another is not
// refused.)
func (acc *Records) refusals(plan *jobs.Plan, finalizers map[string]bool, culprits []string) []Refusal {
	committers := map[string][]string{}
	for _, c := range acc.Commits {
		committers[c.MicroID.String()] = append(committers[c.MicroID.String()], c.Processor)
	}
	var out []Refusal
	for _, q := range acc.Requests {
		reason := ""
		switch {
		case !finalizers[q.Author]:
			reason = RefusedAuthor
		case slices.Contains(culprits, q.Author):
			reason = RefusedCulprit
		case q.Dispute != nil && !validDispute(*q.Dispute), q.Check != nil && !validCheck(*q.Check),
			q.Redo != nil && !validRedo(plan, q.Redo, culprits, committers[q.Redo.Micro]):
			reason = RefusedContent
		case !acc.ordered(plan.JobID, &q):
			reason = RefusedOrder
		default:
			continue
		}
		out = append(out, Refusal{Key: q.Key, Kind: q.Kind(), Reason: reason, Seq: q.Seq})
	}
	return out
}
