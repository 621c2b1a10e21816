package processor

import (
	"context"
	"slices"
	"time"

	"github.com/jobmesh/jobmesh/jobs"
)

// Progress on the Job channel reaches every processor of the job, so a
// message per turn would cost each of P processors a delivery for every
// turn of every other: P² messages per job's worth of turns. A processor
// instead says what it completed at most once per ProgressWindow: the
// first completion after a quiet window goes out at once, later ones wait
// for the window's end and go out as one message (several when more than
// jobs.MaxProgressMicros are due). The messages a job's processors send
// then follow the job's length in windows, not its turns.

// progressBatch is the MicroJobs of one job this processor completed and
// has not said so yet on the Job channel. The zero value is empty; the
// worker's lock guards it.
type progressBatch struct {
	pending   []string  // MicroIDs not yet said
	sent      time.Time // when the last message went out
	scheduled bool      // a flush is due at sent + window
}

// add takes micros completed at now. It returns the MicroJobs due now
// (every pending one, when the window since the last message is over or
// a full message is pending), or, when none are, whether the caller must
// schedule a flush, after wait.
func (b *progressBatch) add(micros []string, now time.Time, window time.Duration) (due []string, wait time.Duration, schedule bool) {
	b.pending = append(b.pending, micros...)
	if len(b.pending) == 0 {
		return nil, 0, false
	}
	if now.Sub(b.sent) >= window || len(b.pending) >= jobs.MaxProgressMicros {
		return b.take(now), 0, false
	}
	if b.scheduled {
		return nil, 0, false
	}
	b.scheduled = true
	return nil, b.sent.Add(window).Sub(now), true
}

// flush ends a scheduled wait: it returns the pending MicroJobs, none
// when add sent them meanwhile.
func (b *progressBatch) flush(now time.Time) []string {
	b.scheduled = false
	if len(b.pending) == 0 {
		return nil
	}
	return b.take(now)
}

func (b *progressBatch) take(now time.Time) []string {
	due := b.pending
	b.pending, b.sent = nil, now
	return due
}

// sayProgress says on the Job channel that this processor completed
// micros of js, now or at the end of the progress window.
func (w *Worker) sayProgress(ctx context.Context, js *jobState, micros []string) {
	w.mu.Lock()
	due, wait, schedule := js.progress.add(micros, w.now(), w.cfg.ProgressWindow)
	w.mu.Unlock()
	w.publishProgress(ctx, js, due)
	if !schedule {
		return
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-w.runCtx.Done():
			return
		case <-t.C:
		}
		w.mu.Lock()
		due := js.progress.flush(w.now())
		w.mu.Unlock()
		w.publishProgress(w.runCtx, js, due)
	}()
}

// publishProgress sends micros as progress messages of at most
// jobs.MaxProgressMicros each.
func (w *Worker) publishProgress(ctx context.Context, js *jobState, micros []string) {
	if len(micros) == 0 {
		return
	}
	t := w.jobChannel(ctx, js)
	if t == nil {
		return
	}
	for part := range slices.Chunk(micros, jobs.MaxProgressMicros) {
		_ = t.Publish(ctx, jobs.Progress(js.plan.JobID.String(), w.self, part))
	}
}
