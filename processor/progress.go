package processor

import (
	"context"
	"slices"
	"time"

	"github.com/jobmesh/jobmesh/jobs"
)

// What a processor sends on a job's Job channel reaches every processor of
// the job. A message per turn, or an answer per request for rooms, would
// cost each of P processors a delivery for every turn or request of every
// other: P² messages. A processor instead sends each of the two at most
// once per ProgressWindow: the first after a quiet window goes out at once,
// later ones wait for the window's end and go out together. Progress is
// said per MacroJob, not per processor: a room's owner, once its queue is
// done, says that the room's MicroJobs are complete (with those of its
// other rooms done within the window); its members say nothing, their
// Results having reached the owner in the room; a verifier, run outside
// any room, is said by its runner. A job's progress messages are then
// about one per MacroJob, however many processors share its rooms, and
// room answers follow the windows in which someone asked, not the number
// asking.

// windowBatch is what this processor has due on one job's Job channel and
// not sent yet: MicroJobs it completed (progress) or peers that asked for
// the job's rooms (answers). The zero value is empty and waits for the
// window whatever is pending; full, when above 0, is how many pending
// items go out at once; once keeps each pending item once, so that what
// is pending stays bounded by the peers that ask, not by how often they
// do. The worker's lock guards it.
type windowBatch struct {
	full      int
	once      bool
	pending   []string  // items not yet sent
	sent      time.Time // when the last message went out
	scheduled bool      // a flush is due at sent + window
}

// add takes items due at now. It returns the items due now (every pending
// one, when the window since the last message is over or a full message
// is pending), or, when none are, whether the caller must schedule a
// flush, after wait.
func (b *windowBatch) add(items []string, now time.Time, window time.Duration) (due []string, wait time.Duration, schedule bool) {
	for _, it := range items {
		if !b.once || !slices.Contains(b.pending, it) {
			b.pending = append(b.pending, it)
		}
	}
	if len(b.pending) == 0 {
		return nil, 0, false
	}
	if now.Sub(b.sent) >= window || b.full > 0 && len(b.pending) >= b.full {
		return b.take(now), 0, false
	}
	if b.scheduled {
		return nil, 0, false
	}
	b.scheduled = true
	return nil, b.sent.Add(window).Sub(now), true
}

// flush ends a scheduled wait: it returns the pending items, none when
// add sent them meanwhile.
func (b *windowBatch) flush(now time.Time) []string {
	b.scheduled = false
	if len(b.pending) == 0 {
		return nil
	}
	return b.take(now)
}

func (b *windowBatch) take(now time.Time) []string {
	due := b.pending
	b.pending, b.sent = nil, now
	return due
}

// windowed adds items to b, one of a job's batches, and calls send with
// what is due now and, when the window holds the rest back, again at the
// window's end.
func (w *Worker) windowed(ctx context.Context, b *windowBatch, items []string, send func(context.Context, []string)) {
	w.mu.Lock()
	due, wait, schedule := b.add(items, w.now(), w.cfg.ProgressWindow)
	w.mu.Unlock()
	if len(due) > 0 {
		send(ctx, due)
	}
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
		due := b.flush(w.now())
		w.mu.Unlock()
		if len(due) > 0 {
			send(w.runCtx, due)
		}
	}()
}

// roomSettled is the Settled callback of this node's room of MacroJob m
// of js: this node owns it and its queue is done. It says on the Job
// channel that the room's MicroJobs are complete, once per room, at once
// or at the progress window's end, and never blocks the room's loop. Jobs
// of one replica only: the hints count for those alone (heardProgress).
func (w *Worker) roomSettled(js *jobState, m *jobs.MacroJob) {
	if replicated(js) {
		return
	}
	w.mu.Lock()
	if js.said[m.Index] || js.finished || w.runCtx.Err() != nil {
		w.mu.Unlock()
		return
	}
	if js.said == nil {
		js.said = map[uint64]bool{}
	}
	js.said[m.Index] = true
	w.mu.Unlock()
	var micros []string
	for _, it := range roomItems(js, m) {
		micros = append(micros, string(it))
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.sayProgress(w.runCtx, js, micros)
	}()
}

// sayProgress says on the Job channel that this processor completed
// micros of js, now or at the end of the progress window.
func (w *Worker) sayProgress(ctx context.Context, js *jobState, micros []string) {
	w.windowed(ctx, &js.progress, micros, func(ctx context.Context, due []string) { w.publishProgress(ctx, js, due) })
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
		_ = t.Publish(ctx, jobs.Progress(js.plan().JobID.String(), w.self, part))
	}
}
