package processor

import (
	"context"

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
	w.firstOwners(js) // derives the ranks for the current view
	committed, err := w.roomCommitted(ctx, js)
	if err != nil {
		return false
	}
	turn := w.turnSize(js)
	w.mu.Lock()
	due := finish.DueVerifiers(js.plan, js.verifiers, w.self, func(id jobs.ID) bool { return committed[id] || js.mine[id] },
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
