package processor

import (
	"context"
	"errors"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// failState is what a worker knows of a job's failure (finish.JobFailed);
// guarded by Worker.mu.
type failState struct {
	// ran are the MicroJobs this node ran, with success or not, and own
	// the failures of those whose last run failed deterministically.
	ran map[jobs.ID]bool
	own map[jobs.ID]records.Failure
	// reported is what this node's failure report says (zero: none yet).
	reported records.FailureReport
	// checkedVer is the index version of the job's records when its
	// failure reports were last read (0: read again).
	checkedVer uint64
	// job is the failure this node stands behind: the job is failed here,
	// and nobody here works on it any more.
	job *finish.FailedJob
}

// noteRun keeps the outcome of this node's run of micro of js: a
// deterministic failure (records.FailureOf) goes into this node's failure
// report of the job, which names its lowest failed MicroJob; a success
// takes micro out of its failures. Other errors say nothing of the job.
func (w *Worker) noteRun(ctx context.Context, js *jobState, micro jobs.ID, err error) {
	f, failed := records.FailureOf(err)
	if err != nil && !failed {
		return
	}
	w.mu.Lock()
	fs := &js.fail
	if fs.ran == nil {
		fs.ran, fs.own = map[jobs.ID]bool{}, map[jobs.ID]records.Failure{}
	}
	fs.ran[micro], fs.checkedVer = true, 0
	if !failed {
		delete(fs.own, micro)
		w.mu.Unlock()
		return
	}
	fs.own[micro] = f
	m, g, _ := finish.OwnReport(fs.own)
	rep := records.NewFailureReport(js.plan().JobID, m, g)
	same := fs.reported == rep
	w.mu.Unlock()
	if same {
		return
	}
	if err := crdt.PutJSON(ctx, w.writer, records.FailureKey(js.plan().JobID, w.self), records.FailureType, rep); err != nil {
		w.log.Warn("writing a failure report", "job", js.plan().JobID, "err", err)
		return
	}
	w.mu.Lock()
	js.fail.reported = rep
	w.mu.Unlock()
	w.m.failureReports.WithLabelValues(rep.Kind).Inc()
	w.log.Warn("MicroJob failed: failure reported", "job", js.plan().JobID, "micro", rep.Micro, "kind", rep.Kind,
		"exit_code", rep.ExitCode, "stderr", rep.Stderr)
}

// checkFailure reads js's failure reports when its records changed, runs
// the first MicroJob they name that this node has not run yet, and marks
// js failed once finish.JobFailed holds for this node. It reports whether
// it ran a MicroJob.
func (w *Worker) checkFailure(ctx context.Context, js *jobState) bool {
	id := js.plan().JobID
	ver := w.index.Version(id)
	w.mu.Lock()
	due := js.fail.job == nil && (ver == 0 || ver != js.fail.checkedVer)
	w.mu.Unlock()
	if !due {
		return false
	}
	reports, err := records.ReadFailures(ctx, w.p.Store, id)
	if err != nil || len(reports) == 0 {
		if err == nil {
			w.mu.Lock()
			js.fail.checkedVer = ver
			w.mu.Unlock()
		}
		return false
	}
	w.mu.Lock()
	ran := make(map[jobs.ID]bool, len(js.fail.ran))
	for m := range js.fail.ran {
		ran[m] = true
	}
	w.mu.Unlock()
	for _, mid := range finish.FailureChecks(reports, ran) {
		micro, err := js.plan().MicroJob(mid)
		if err != nil {
			// A report naming no MicroJob of the job: nothing to run.
			w.mu.Lock()
			if js.fail.ran == nil {
				js.fail.ran, js.fail.own = map[jobs.ID]bool{}, map[jobs.ID]records.Failure{}
			}
			js.fail.ran[mid] = true
			w.mu.Unlock()
			continue
		}
		w.log.Info("running a MicroJob reported failed", "job", id, "micro", mid)
		_, _, err = w.run(ctx, js, micro)
		if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
			w.log.Info("MicroJob reported failed failed here too", "job", id, "micro", mid, "err", err)
		}
		return true
	}
	w.mu.Lock()
	js.fail.checkedVer = ver
	fj, failed := finish.JobFailed(reports, w.cfg.Dispatch.FailReports, js.fail.own)
	w.mu.Unlock()
	if failed {
		w.markFailed(js, fj)
	}
	return false
}

// markFailed marks js failed as fj: this processor stops working on it,
// and settles it by its failure settlement.
func (w *Worker) markFailed(js *jobState, fj finish.FailedJob) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if js.fail.job != nil {
		return
	}
	js.fail.job = &fj
	w.stops++
	if js.stopWait != nil {
		js.stopWait()
	}
	w.m.failedJobs.Inc()
	w.log.Warn("job failed", "job", js.plan().JobID, "micro", fj.Micro, "kind", fj.Failure.Kind,
		"exit_code", fj.Failure.ExitCode, "reporters", fj.Reporters, "stderr", fj.Stderr)
}

// failedLocked reports whether js is failed here; w.mu is held.
func failedLocked(js *jobState) bool { return js.fail.job != nil }
