package processor

import (
	"context"
	"hash/fnv"
	"slices"

	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
)

// The verifier MicroJob of a job that is not replicated is run outside
// its MacroJob's room, by the processors finish.VerifierRunners ranks,
// each when finish.DueVerifiers says its turn is due.

// outOfRoom reports whether MicroJob mu of js is run outside its room.
func outOfRoom(js *jobState, mu *jobs.MicroJob) bool {
	return mu.Verifier && !replicated(js)
}

// runVerifiers runs, outside any room, up to a turn's worth of js's
// verifier MicroJobs that are this processor's turn
// (finish.DueVerifiers), and reports whether it ran any.
func (w *Worker) runVerifiers(ctx context.Context, js *jobState) bool {
	if replicated(js) {
		return false
	}
	ranked, ok := w.rankedAt(js, w.now())
	if !ok {
		return false
	}
	w.mu.Lock()
	if js.checksAt.After(ranked) {
		ranked = js.checksAt // the verifiers exist since their checks were drawn
	}
	w.mu.Unlock()
	ranks := w.verifierRanks(ctx, js)
	committed, err := w.roomCommitted(ctx, js)
	if err != nil {
		return false
	}
	turn := w.turnSize(js)
	w.mu.Lock()
	due := finish.DueVerifiers(js.plan(), ranks, w.self, func(id jobs.ID) bool { return committed[id] || js.mine[id] },
		w.now().Sub(ranked), w.processingTimeout(), turn)
	w.mu.Unlock()
	if len(due) == 0 {
		return false
	}
	ids := make([]macrojob.ID, len(due))
	for i, id := range due {
		ids[i] = macrojob.ID(id.String())
	}
	w.process(ctx, js, nil, ids)
	return true
}

// verifierRanks returns js's verifier ranks (finish.VerifierRunners) for
// the current dispatch view and the commitments this node has of the
// MicroJobs the verifiers check, derived again when either changed. Who
// ran those MicroJobs is not settled when the checks are drawn: a
// duplicate run's commitment can come later, and its author, who stores
// it first, ranks itself behind the processors that ran none while the
// others, without it yet, still rank it first. Ranks kept from the draw
// would leave every processor naming another until the next runner's
// turn, k × ProcessingTimeout later; derived again, they agree once the
// stores do.
func (w *Worker) verifierRanks(ctx context.Context, js *jobState) [][]string {
	w.firstOwners(js) // derives the processors to rank for the current view
	plan := js.plan()
	ran := func(jobs.ID, string) bool { return false }
	var digest uint64
	if w.index != nil { // without a record index every processor ranks as if it ran nothing
		if p, err := w.progressOf(ctx, js); err == nil {
			ran = func(mid jobs.ID, q string) bool { return slices.Contains(p.CommittedBy(mid), q) }
			digest = checkedCommitters(plan, p)
		}
	}
	w.mu.Lock()
	procs, owners, have := js.rankProcs, js.owners, js.verifiers
	fresh := have != nil && js.verifiersRan == digest
	w.mu.Unlock()
	if fresh || owners == nil {
		return have
	}
	ranks := finish.VerifierRunners(plan.JobID.String(), plan, procs, owners, ran)
	w.mu.Lock()
	if js.plan() == plan && js.rankProcs != nil && slices.Equal(js.rankProcs, procs) {
		js.verifiers, js.verifiersRan = ranks, digest
	}
	w.mu.Unlock()
	return ranks
}

// checkedCommitters digests who committed each MicroJob that a verifier
// of plan checks, as p has it: it changes when any of them gains a
// committer.
func checkedCommitters(plan *jobs.Plan, p finish.Progress) uint64 {
	h := fnv.New64a()
	for i := range plan.Macros {
		m := &plan.Macros[i]
		ver := m.Verifier()
		if ver == nil {
			continue
		}
		for _, src := range ver.Sources {
			h.Write([]byte(m.Micros[src.Slot].ID.String()))
			for _, q := range p.CommittedBy(m.Micros[src.Slot].ID) {
				h.Write([]byte{0})
				h.Write([]byte(q))
			}
			h.Write([]byte{1})
		}
	}
	return h.Sum64()
}
