package processor

import (
	"context"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/meshview"
	"github.com/jobmesh/jobmesh/records"
)

// enforceCap aborts the lowest-value jobs when the queued jobs (unfinished,
// not aborted, not settled, no commitment yet), each counted once per
// replica, exceed the cap for the live processors of v. Any node may do
// it; each writes the same record, once. With job stores a node counts
// the jobs whose store it holds and those no live processor can serve:
// of another job it cannot see whether a commitment started it, and
// would evict a running job, while one nobody can serve has no
// processor in its store to start it.
func (w *Worker) enforceCap(ctx context.Context, v *meshview.View) {
	if v == nil {
		return
	}
	w.mu.Lock()
	var open []*jobState
	for _, js := range w.known {
		id := js.plan().JobID
		if js.finished || js.aborted || v.Settled(id) {
			continue
		}
		if w.p.Jobs == nil || w.p.Jobs.Holds(id) || !v.Servable(meshview.DispatchJob(js.info, js.plan())) {
			open = append(open, js)
		}
	}
	w.mu.Unlock()
	// The cap counts processor slots: a job counts its replicas
	// (dispatch.Queue.Slots).
	limit := max(int(w.cfg.Dispatch.QueueAlpha*float64(v.Live())), w.cfg.Dispatch.MinQueueLen)
	slots := 0
	for _, js := range open {
		slots += max(int(js.info.Requirements.Replicas), 1)
	}
	if slots <= limit {
		return
	}
	var queued []dispatch.Job
	for _, js := range open {
		p, err := w.progressOf(ctx, js)
		if err != nil {
			return
		}
		if !p.Started() {
			queued = append(queued, meshview.DispatchJob(js.info, js.plan()))
		}
	}
	evict, err := meshview.Evictions(w.cfg.Dispatch, queued, v.Live())
	if err != nil {
		return
	}
	for _, j := range evict {
		id, err := jobs.ParseHash(j.ID)
		if err != nil {
			continue
		}
		if _, err := records.ReadAborted(ctx, w.p.Store, id); err == nil {
			w.markAborted(id)
			continue
		}
		if err := crdt.PutJSON(ctx, w.p.Store, records.AbortedKey(id), records.AbortedType, records.NewJobAborted(id)); err != nil {
			w.log.Warn("writing a records.JobAborted record", "job", id, "err", err)
			continue
		}
		w.markAborted(id)
		w.m.aborted.Inc()
		w.log.Info("job aborted: the queue is over its cap", "job", id, "live", v.Live(), "queued", len(queued))
	}
}

// markAborted stops this processor from working on a job.
func (w *Worker) markAborted(id jobs.ID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if js := w.known[id]; js != nil && !js.aborted {
		js.aborted = true
		w.log.Info("job aborted", "job", id)
	}
}

// cancelled reports whether js has been cancelled by its creator; a yes is
// kept.
func (w *Worker) cancelled(ctx context.Context, js *jobState) bool {
	w.mu.Lock()
	done := js.cancelled
	w.mu.Unlock()
	if done {
		return true
	}
	ok, err := records.Cancelled(ctx, w.p.Store, js.info)
	if err != nil || !ok {
		return false
	}
	w.mu.Lock()
	js.cancelled = true
	w.mu.Unlock()
	w.log.Info("skipping job: cancelled by its creator", "job", js.plan().JobID)
	return true
}
