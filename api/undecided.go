package api

import (
	"cmp"
	"errors"
	"hash/fnv"
	"slices"
	"strconv"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// A job whose vote on a block reached no decisive margin has no verdict
// and will not get one unless a late re-runner's answer decides it: the
// finalizers log it, and the summary says so as the state undecided. The
// serving node judges the job's records as any reader does (the revealed
// check seed, else the lapse seed; every disclosure counting, as
// dapp.LoadStatus does; the protocol's escalation rule) but only when that
// can find something: no verdict, every MicroJob disclosed, and a dispute
// or check request among the records. A judgement is kept per job until
// its records change.

// maxUndecided bounds the judgements a JobView keeps.
const maxUndecided = 256

// undecidedMemo is a job's undecided blocks as judged from the records
// whose fingerprint is sum.
type undecidedMemo struct {
	sum    uint64
	blocks []apiv1.UndecidedBlock
}

// addUndecided sets job j, running without a verdict, to undecided when
// judging its records rs finds a block no vote decided. A judging error
// leaves the job running: it is logged, never the summary's error.
func (v *JobView) addUndecided(info *jobs.JobInfo, plan *jobs.Plan, rs []crdt.Record, j *apiv1.Job) {
	if j.State != apiv1.JobRunning || j.Disclosed < j.MicroJobs || !slices.ContainsFunc(rs, isRequest) {
		return
	}
	id := info.ID()
	sum := fingerprint(rs)
	v.mu.Lock()
	memo, ok := v.undecided[id]
	v.mu.Unlock()
	if !ok || memo.sum != sum {
		blocks, err := undecidedBlocks(info, plan, rs)
		if err != nil {
			v.logger().Warn("judging a job for its summary", "job", id, "err", err)
			return
		}
		memo = undecidedMemo{sum: sum, blocks: blocks}
		v.mu.Lock()
		if v.undecided == nil || len(v.undecided) >= maxUndecided {
			v.undecided = map[jobs.ID]undecidedMemo{}
		}
		v.undecided[id] = memo
		v.mu.Unlock()
	}
	if len(memo.blocks) > 0 {
		j.State = apiv1.JobUndecided
		j.Undecided = slices.Clone(memo.blocks)
	}
}

// isRequest reports whether r is a dispute or check request: without
// one, no vote was held, so none is undecided.
func isRequest(r crdt.Record) bool {
	return !r.Tombstone && (r.Type == records.DisputeType || r.Type == records.CheckType)
}

// fingerprint identifies the records rs: a record replaced or added
// changes its key's seq or the set of keys.
func fingerprint(rs []crdt.Record) uint64 {
	h := fnv.New64a()
	var b []byte
	for _, r := range rs {
		b = append(b[:0], r.Key...)
		b = strconv.AppendUint(append(b, 0), r.Seq, 10)
		if r.Tombstone {
			b = append(b, 't')
		}
		h.Write(append(b, 0))
	}
	return h.Sum64()
}

// undecidedBlocks judges job info, of public plan plan, from its records
// rs (a query of records.JobKey(id) + "/") and returns the blocks whose
// vote is undecided: disputes (finish.Judge's Undecided) and self-checked
// blocks (finish.Escalation.CheckRuling), by block. It returns none while
// a MicroJob of the checked plan lacks a disclosure, or the checks are
// not drawn.
func undecidedBlocks(info *jobs.JobInfo, plan *jobs.Plan, rs []crdt.Record) ([]apiv1.UndecidedBlock, error) {
	recs := finish.FromRecords(info.ID(), rs)
	checks := finish.ChooseChecks(info, plan, recs, finish.ProgressOf(recs, int(info.Requirements.Replicas)), 0, 0)
	checked, err := finish.CheckedPlan(plan, checks)
	if errors.Is(err, finish.ErrChecksPending) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	jg, err := finish.Judge(info, checked, recs)
	if err != nil {
		return nil, err
	}
	if len(jg.V.Missing) > 0 {
		return nil, nil
	}
	var out []apiv1.UndecidedBlock
	for _, u := range jg.V.Undecided {
		votes := map[string]int{}
		for _, h := range u.Dispute.Hashes {
			votes[h]++
		}
		for _, x := range u.Votes {
			votes[x.Hash]++
		}
		out = append(out, apiv1.UndecidedBlock{Block: u.Dispute.Block, Kind: apiv1.UndecidedDispute,
			Sides: slices.Clone(u.Dispute.Processors[:]), Votes: votes, Reason: u.Reason})
	}
	esc := finish.EscalationFor(checked)
	for _, sc := range finish.CheckTargets(checked, jg.V, jg.Recs) {
		r := esc.CheckRuling(jg.Recs, sc)
		if r.Outcome != finish.VoteUndecided {
			continue
		}
		votes := map[string]int{}
		for _, t := range r.Tally {
			votes[t.Hash] = t.Votes
		}
		out = append(out, apiv1.UndecidedBlock{Block: sc.Block, Kind: apiv1.UndecidedSelfCheck,
			Sides: []string{sc.Processor}, Votes: votes, Reason: r.Reason})
	}
	slices.SortFunc(out, func(a, b apiv1.UndecidedBlock) int {
		return cmp.Or(cmp.Compare(a.Block, b.Block), cmp.Compare(a.Kind, b.Kind))
	})
	return out, nil
}
