package processor

import (
	"context"
	"fmt"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// VerdictFromRecords is, for the tests outside the package, the verdict
// record (without its output) that a finalizer holding store's records
// of job info writes, and whether its judgement is final there.
func VerdictFromRecords(ctx context.Context, store crdt.Reader, info *jobs.JobInfo) (records.VerdictRecord, bool, error) {
	plan, err := jobs.Slice(info)
	if err != nil {
		return records.VerdictRecord{}, false, err
	}
	rs, err := store.Query(ctx, records.JobKey(info.ID())+"/")
	if err != nil {
		return records.VerdictRecord{}, false, err
	}
	recs := finish.NewRecords()
	for _, r := range rs {
		recs.Add(info.ID(), finish.OpenPart(info.ID(), r))
	}
	if plan, err = finish.CheckedPlan(plan, finish.ChooseChecks(info, plan, recs, finish.ProgressOf(recs, int(info.Requirements.Replicas)), 0, 0)); err != nil {
		return records.VerdictRecord{}, false, err
	}
	j, err := finish.Judge(info, plan, recs)
	if err != nil {
		return records.VerdictRecord{}, false, err
	}
	procs, err := finish.Processors(ctx, store)
	if err != nil {
		return records.VerdictRecord{}, false, err
	}
	return finish.VerdictFor(j, finish.FinalRounds(plan, recs)), j.Final(plan, procs), nil
}

// VerifierRanks is, for the tests outside the package, the first n
// processors this worker ranks for the verifier of MacroJob macro of job
// (finish.VerifierRunners) and, in words, the rest of its view of that
// verifier: the MacroJob's first owner, whether this worker committed the
// verifier, and how long ago it drew the checks; ok whether it has ranked
// them.
func (w *Worker) VerifierRanks(job jobs.ID, macro uint64, n int) (ranks []string, view string, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	js := w.known[job]
	if js == nil || js.plan() == nil || int(macro) >= len(js.verifiers) || int(macro) >= len(js.owners) {
		return nil, "", false
	}
	r := js.verifiers[macro]
	mine := false
	if ver := js.plan().Macros[macro].Verifier(); ver != nil {
		mine = js.mine[ver.ID]
	}
	owner := js.owners[macro]
	view = fmt.Sprintf("owner %s, committed here %t, checks drawn %s ago, finished %t, eligible %d",
		owner[max(0, len(owner)-6):], mine, w.now().Sub(js.checksAt).Round(time.Second), js.finished, js.eligible)
	return r[:min(n, len(r))], view, true
}

// Checks is, for the tests outside the package, where this worker's
// verifiers of job come from and the check seed of its plan; ok whether
// it follows the job.
func (w *Worker) Checks(job jobs.ID) (source finish.CheckSource, seed jobs.Seed, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	js := w.known[job]
	if js == nil || js.plan() == nil {
		return finish.CheckPending, jobs.Seed{}, false
	}
	return js.checks, js.plan().CheckSeed, true
}
