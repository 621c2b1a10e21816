package finish

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// A dispute is settled by a vote on its block: each side is one vote for
// its hash, each re-runner that answered one vote for its own. Colluders
// that give one identical wrong hash win a majority of three whenever the
// third is one of them, so the vote escalates until a hash leads by a
// margin (Escalation.Rule); only a side whose hash lost to the winner is
// a culprit.
//
// Why Margin is 17: with colluders holding a share p of the draw weight,
// each re-runner moves the honest hash's lead up with probability 1 − p and
// down with p, from the sides' tie. The honest side loses only if the lead
// reaches −Margin before +Margin (rounds end at +Margin exactly, so they
// cannot overshoot it): gambler's ruin, 1/(1 + ((1−p)/p)^Margin); at
// p = 1/4, 1/(1 + 3^17) ≈ 8·10⁻⁹ per dispute, so that a job of ten
// MacroJobs whose ten verifier blocks each colluders dispute is framed at
// most about 10⁻⁶ (package checksim, Framing); a larger job raises the
// margin (EscalationFor). A mesh too small to give
// the margin decides when its pool is exhausted, by a lead of 2 with 2/3
// of the votes: there an honest side loses only if colluders hold about
// two thirds of the pool, and no narrow vote (a lead of 1) names anyone.

// Escalation configures the dispute rule. Every node that judges a job
// must use the same values, as it uses the same code: they are a rule of
// the protocol, not a tuning knob, and readers use EscalationFor.
type Escalation struct {
	// Margin is the lead in votes that decides a dispute. Default 17.
	Margin int
	// MaxReruns bounds the re-runners one dispute asks (the cost of a
	// dispute); a dispute that reaches it undecided stays undecided.
	// Default 4 × Margin: at p = 1/4 about 1% of disputes reach it (3 ×
	// Margin would leave about 7%).
	MaxReruns int
}

// DefaultEscalation returns the protocol's dispute rule for a job of at
// most baseChecked checked blocks (EscalationFor).
func DefaultEscalation() Escalation { return Escalation{Margin: 17, MaxReruns: 68} }

// baseChecked is the number of checked blocks (ten MacroJobs of ten) the
// default margin keeps framing under 10⁻⁶ for.
const baseChecked = 100

// EscalationFor returns the protocol's dispute rule for the job of plan.
// Each checked block (one per regular MicroJob) is a vote colluders can
// force, so a job's framing odds grow with their number D: the margin is
// DefaultEscalation's plus ⌈log₃(D / baseChecked)⌉, and MaxReruns stays
// 4 × Margin. At a colluding share of 1/4 each extra vote of margin divides
// a dispute's odds by about 3, so a job of any size is framed with
// probability at most about baseChecked / (1 + 3¹⁷) ≈ 7.7·10⁻⁷. The rule
// depends on the plan alone, so every reader applies the same one.
func EscalationFor(plan *jobs.Plan) Escalation {
	d := 0
	for _, m := range plan.Macros {
		d += m.Regular
	}
	return EscalationForChecked(d)
}

// EscalationForChecked is EscalationFor a job of checked blocks checked.
func EscalationForChecked(checked int) Escalation {
	e := DefaultEscalation()
	for n := baseChecked; n < checked; n *= 3 {
		e.Margin++
	}
	e.MaxReruns = 4 * e.Margin
	return e
}

// ErrEscalation: an Escalation's values break its rules.
var ErrEscalation = errors.New("finish: invalid escalation")

// Validate checks e: a margin of at least 2 (a lead of one vote is a
// narrow vote, and nobody is slashed on one) and room for one round.
func (e Escalation) Validate() error {
	switch {
	case e.Margin < 2:
		return fmt.Errorf("%w: margin %d, at least 2", ErrEscalation, e.Margin)
	case e.MaxReruns < e.Margin:
		return fmt.Errorf("%w: at most %d re-runners, fewer than the margin %d", ErrEscalation, e.MaxReruns, e.Margin)
	}
	return nil
}

// Outcome is where a dispute stands (Ruling).
type Outcome int

const (
	// VotePending: re-runners asked have not answered yet.
	VotePending Outcome = iota
	// VoteEscalate: ask Ruling.Ask more re-runners.
	VoteEscalate
	// VoteWon: Ruling.Winner won the vote.
	VoteWon
	// VoteUndecided: no more re-runs can decide the dispute.
	VoteUndecided
)

var outcomeNames = [...]string{"pending", "escalate", "won", "undecided"}

func (o Outcome) String() string { return outcomeNames[o] }

// Tally is the votes for one hash.
type Tally struct {
	Hash  string
	Votes int
}

// Ruling is what the rule makes of a dispute's votes.
type Ruling struct {
	Outcome Outcome
	Winner  string // VoteWon: the winning hash
	Ask     int    // VoteEscalate: how many more re-runners to draw
	Reason  string // VoteUndecided: why
	// Tally are the votes by hash, most first (then by hash).
	Tally []Tally
	// Votes are the answers of the re-runners, by re-runner.
	Votes []microjob.Vote
}

// Rule is the dispute rule. asked re-runners were named for dispute d
// (drawn, whether dropped for silence since or not), votes are the
// answers of those that answered, silent how many of the asked were
// dropped for silence and have not answered, and exhausted says no
// eligible re-runner was left to draw.
//
// A hash wins when it leads every other by Margin votes even if every
// re-runner asked that has not answered voted against it: who writes the
// request decides when a re-runner counts as silent, so that a silent
// re-runner must not be able to tip a vote, and a vote cannot be won by
// the fast answers of some before the others answer. Once the order is
// exhausted and every re-runner not dropped answered, a hash also wins by
// a lead of at least 2 with the silent counted against it and at least
// 2/3 of the votes in: a processor that died after it was asked does not
// keep a small mesh's vote open, and colluders that also write the request
// still need more than half the pool, the bound without drops. Otherwise, while fewer than MaxReruns were asked, the
// dispute escalates by a round of Margin − lead re-runners (at least 1,
// at most what MaxReruns leaves), so that one round can decide; else it
// is undecided.
func (e Escalation) Rule(d microjob.Dispute, asked int, votes []microjob.Vote, silent int, exhausted bool) Ruling {
	return e.rule(d.Hashes[:], asked, votes, silent, exhausted)
}

// rule is Rule with sides, the hashes of the processors whose results are
// at stake: a dispute's two, a self-checked block's one.
func (e Escalation) rule(sides []string, asked int, votes []microjob.Vote, silent int, exhausted bool) Ruling {
	r := Ruling{Votes: slices.Clone(votes)}
	slices.SortFunc(r.Votes, func(a, b microjob.Vote) int { return cmp.Compare(a.Processor, b.Processor) })
	r.Tally = countVotes(sides, r.Votes)
	total := len(sides) + len(r.Votes)
	top := r.Tally[0]
	lead := top.Votes
	if len(r.Tally) > 1 {
		lead -= r.Tally[1].Votes
	}
	unanswered := max(0, asked-len(r.Votes))
	silent = min(silent, unanswered)
	switch {
	case lead-unanswered >= e.Margin:
		r.Outcome, r.Winner = VoteWon, top.Hash
	case unanswered > silent:
		r.Outcome = VotePending
	case exhausted && lead-silent >= 2 && 3*top.Votes >= 2*total:
		r.Outcome, r.Winner = VoteWon, top.Hash
	case exhausted:
		r.Outcome = VoteUndecided
		r.Reason = fmt.Sprintf("no re-runner left to draw: lead of %d with %d of %d votes, %d silent", lead, top.Votes, total, silent)
	case asked >= e.MaxReruns:
		r.Outcome = VoteUndecided
		r.Reason = fmt.Sprintf("%d re-runners asked, the most a dispute may ask: lead of %d, %d silent, %d needed", asked, lead, silent, e.Margin)
	default:
		r.Outcome = VoteEscalate
		r.Ask = min(max(1, e.Margin-(lead-silent)), e.MaxReruns-asked)
	}
	return r
}

// countVotes counts the votes of sides and of votes, most first.
func countVotes(sides []string, votes []microjob.Vote) []Tally {
	count := map[string]int{}
	for _, h := range sides {
		count[h]++
	}
	for _, v := range votes {
		count[v.Hash]++
	}
	out := make([]Tally, 0, len(count))
	for h, n := range count {
		out = append(out, Tally{Hash: h, Votes: n})
	}
	slices.SortFunc(out, func(a, b Tally) int { return cmp.Or(cmp.Compare(b.Votes, a.Votes), cmp.Compare(a.Hash, b.Hash)) })
	return out
}

// RuleOf is Rule for dispute d with the request and re-runs of its block
// in recs (accepted: one request per block). Every re-runner the request
// names or dropped is asked, and its answer counts whenever it comes; a
// side never votes as a re-runner. Without a request the dispute
// escalates from the sides' tie.
func (e Escalation) RuleOf(recs *Records, d microjob.Dispute) Ruling {
	req, ok := recs.Dispute[d.Block]
	if !ok {
		return e.Rule(d, 0, nil, 0, false)
	}
	asked, silent := askedOf(recs, d.Block, DisputeRerunners(req), req.Dropped, d.Processors[:])
	return e.Rule(d, len(asked), answers(recs, d.Block, asked), silent, req.Exhausted)
}

// askedOf are the re-runners of block a request asked: those named and
// those dropped, once each, never a side; silent counts the dropped ones
// that have not answered.
func askedOf(recs *Records, block uint64, named, dropped, sides []string) (asked []string, silent int) {
	for _, p := range append(slices.Clone(named), dropped...) {
		if !slices.Contains(sides, p) && !slices.Contains(asked, p) {
			asked = append(asked, p)
		}
	}
	for _, p := range asked {
		if slices.Contains(dropped, p) && len(answers(recs, block, []string{p})) == 0 {
			silent++
		}
	}
	return asked, silent
}

// answers are the re-runs of block in recs by the re-runners named.
func answers(recs *Records, block uint64, named []string) []microjob.Vote {
	var votes []microjob.Vote
	for _, p := range named {
		if i := slices.IndexFunc(recs.Reruns[block], func(rr records.Rerun) bool { return rr.Processor == p }); i >= 0 {
			if h := recs.Reruns[block][i].Hash; validHash(h) {
				votes = append(votes, microjob.Vote{Processor: p, Hash: h})
			}
		}
	}
	return votes
}

// validHash reports whether h is a lowercase hex SHA-256.
func validHash(h string) bool {
	_, err := jobs.ParseHash(h)
	return err == nil && len(h) == 64
}

// DisputeRerunners are the re-runners a dispute request names: its third,
// then those drawn as it escalated.
func DisputeRerunners(r records.Dispute) []string {
	return append([]string{r.Third}, r.More...)
}

// validDispute reports whether a dispute request keeps the content rules:
// a valid third, and re-runners that are distinct, neither side, and not
// dropped.
func validDispute(r records.Dispute) bool {
	if !r.Valid() {
		return false
	}
	named := DisputeRerunners(r)
	for i, p := range named {
		if p == "" || p == r.Dispute.Processors[0] || p == r.Dispute.Processors[1] ||
			slices.Contains(r.Dropped, p) || slices.Contains(named[:i], p) {
			return false
		}
	}
	return true
}

// NextRequest is the dispute request a finalizer writes for dispute d of
// job id after ruling r (RuleOf) on prev, the request in force (nil:
// none): silent are the named re-runners that did not answer within the
// re-run timeout, dropped here. When the ruling, with them dropped, says
// Escalate, the round's re-runners are the next in the block's rerun order
// over cands (RerunOrder); those unable to work are named dropped at once
// and do not count toward the round. An order that runs dry marks the
// request Exhausted. ok is false when there is nothing new to write, or
// no re-runner at all.
func (e Escalation) NextRequest(id jobs.ID, d microjob.Dispute, prev *records.Dispute, r Ruling, silent []string, cands []Candidate, unable func(string) bool) (records.Dispute, bool) {
	rec := records.Dispute{Dispute: d}
	var rd round
	if prev != nil {
		rec = *prev
		rd = round{named: DisputeRerunners(*prev), dropped: prev.Dropped, exhausted: prev.Exhausted}
	}
	order := RerunOrder(id, records.DisputeType, d.Block, cands, d.Processors[:])
	e.next(&rd, d.Hashes[:], r, silent, 0, order, unable)
	if len(rd.named) == 0 || !rd.changed {
		return records.Dispute{}, false
	}
	rec.Third, rec.More, rec.Dropped, rec.Exhausted = rd.named[0], slices.Clone(rd.named[1:]), rd.dropped, rd.exhausted
	return rec, true
}
