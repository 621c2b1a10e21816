package processor

import (
	"context"
	"time"

	"github.com/jobmesh/jobmesh/disclosure"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
)

// disclose writes the pending disclosures that are due (disclosure.Pending:
// their MacroJob is fully committed, and no running turn is to carry
// them).
func (w *Worker) disclose(ctx context.Context) { w.discloseAt(ctx, w.now()) }

// discloseAt is disclose at time now.
func (w *Worker) discloseAt(ctx context.Context, now time.Time) {
	r := w.discl.Begin(ctx, followed{w}, nil)
	r.HoldFor(now)
	written := false
	if len(r.Due) > 0 {
		if err := w.writer.PutBatch(ctx, disclosure.Entries(r.Due)); err != nil {
			if ctx.Err() == nil {
				w.log.Warn("writing disclosures", "count", len(r.Due), "err", err)
			}
		} else {
			written = true
			w.log.Debug("results disclosed", "count", len(r.Due))
		}
	}
	r.End(written)
}

// followed is the worker's jobs as disclosure.Pending asks for them.
type followed struct{ w *Worker }

var _ disclosure.Jobs = followed{}

// Progress is the progress (progressOf) and plan of a job the worker
// follows.
func (f followed) Progress(ctx context.Context, id jobs.ID) (finish.Progress, *jobs.Plan, bool, error) {
	f.w.mu.Lock()
	js := f.w.known[id]
	f.w.mu.Unlock()
	if js == nil {
		return finish.Progress{}, nil, false, nil
	}
	p, err := f.w.progressOf(ctx, js)
	return p, js.plan(), true, err
}
