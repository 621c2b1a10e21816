package finish

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// Hidden checks (docs/ARCHITECTURE.md). The public plan (jobs.Slice) names
// no verifier. A job of one replica draws its verifiers from a check seed
// nobody but its DApp knows until every regular MicroJob is committed: the
// DApp's secret, whose keccak256 is the JobInfo's SeedCommitment, revealed
// in a reveal record signed by the creator's wallet. A DApp that has not
// revealed RevealTimeout after the reader saw the last regular commitment
// has lapsed: the check seed is then jobs.LapseSeed over the commitments,
// and the DApp's escrow settles all the same (a lapsed DApp gets no refund
// for its silence). A valid reveal always wins over the lapse: a verifier
// drawn from the lapse seed is another MicroJob (its ID hashes the seed),
// so a late reveal costs a verifier run, never a false dispute. A group
// job (R > 1) is checked by its replicas; its verifiers are drawn from
// the public seed commitment at once.

// CheckSource says where a job's check seed comes from.
type CheckSource int

// The sources of a check seed.
const (
	// CheckPending: the seed is not known yet.
	CheckPending CheckSource = iota
	// CheckPublic: a group job's verifiers come from its public seed
	// commitment.
	CheckPublic
	// CheckRevealed: the DApp revealed its secret.
	CheckRevealed
	// CheckLapsed: the DApp did not reveal in time.
	CheckLapsed
)

func (s CheckSource) String() string {
	switch s {
	case CheckPublic:
		return "public"
	case CheckRevealed:
		return "revealed"
	case CheckLapsed:
		return "lapsed"
	}
	return "pending"
}

// ErrChecksPending: the job's verifiers are not drawn yet, so it cannot
// be judged.
var ErrChecksPending = errors.New("finish: the job's checks are not drawn yet")

// ErrEarlyReveal: a reveal came while the reader still missed regular
// commitments. It is not acted on until they are in.
var ErrEarlyReveal = errors.New("finish: reveal before every regular MicroJob is committed")

// Checks is what a reader knows of a job's check seed.
type Checks struct {
	Seed   jobs.Seed   // zero while Pending
	Source CheckSource // where Seed comes from
	// Refused are the reveal records that do not count, by key, each with
	// its reason (records.ErrRevealMismatch, records.ErrRevealAuthor,
	// ErrEarlyReveal, ...): the driver counts each once.
	Refused map[string]error
}

// ChooseChecks says which check seed job info's verifiers come from, given
// its public plan, its records, its progress and how long ago (since) the
// reader saw every regular MicroJob committed (ignored while they are not).
// lapse is the RevealTimeout.
func ChooseChecks(info *jobs.JobInfo, plan *jobs.Plan, recs *Records, p Progress, since, lapse time.Duration) Checks {
	if info.Requirements.Replicas > 1 {
		return Checks{Seed: info.SeedCommitment, Source: CheckPublic}
	}
	out := Checks{}
	complete := p.RegularsCommitted(plan)
	var revealed jobs.Seed
	for _, r := range recs.Reveals {
		seed, err := records.CheckReveal(info, r.Rec)
		switch {
		case err != nil:
			out.refuse(r.Key, err)
		case !complete:
			out.refuse(r.Key, ErrEarlyReveal)
		default:
			revealed = seed
		}
	}
	switch {
	case !revealed.IsZero():
		out.Seed, out.Source = revealed, CheckRevealed
	case complete && since >= lapse:
		out.Seed, out.Source = LapseSeed(plan, recs), CheckLapsed
	}
	return out
}

func (c *Checks) refuse(key string, err error) {
	if c.Refused == nil {
		c.Refused = map[string]error{}
	}
	c.Refused[key] = err
}

// LapseSeed is the check seed of a job whose DApp lapsed: jobs.LapseSeed
// over, for each regular MicroJob of plan in order, the smallest
// commitment hash recs hold for it (zero for one without any).
func LapseSeed(plan *jobs.Plan, recs *Records) jobs.Seed {
	least := map[jobs.ID][32]byte{}
	for _, c := range recs.Commits {
		if l, ok := least[c.MicroID]; !ok || bytes.Compare(c.Commit[:], l[:]) < 0 {
			least[c.MicroID] = c.Commit
		}
	}
	var commits []jobs.Hash
	for i := range plan.Macros {
		m := &plan.Macros[i]
		for _, mu := range m.Micros[:m.Regular] {
			commits = append(commits, least[mu.ID])
		}
	}
	return jobs.LapseSeed(plan.JobID, commits)
}

// CheckedPlan is plan with its verifiers drawn from c's seed, or an error
// while c is Pending.
func CheckedPlan(plan *jobs.Plan, c Checks) (*jobs.Plan, error) {
	if c.Source == CheckPending {
		return nil, fmt.Errorf("job %s: %w", plan.JobID, ErrChecksPending)
	}
	return plan.WithChecks(c.Seed)
}
