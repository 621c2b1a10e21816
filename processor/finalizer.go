package processor

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/jobmesh/jobmesh/jobs"
)

// Finishing a complete job (asking for re-runs, assembling the output,
// writing the verdict) is one processor's work: the designated finalizer.
// Every processor ranks the job's finalizers the same way from the same
// records (finalizerOrder); while one is finishing the job it says so on
// the Job channel (a "finalizing" message) at least every quarter of
// FinalizeTakeover. A processor of rank k stands by while the job has
// been complete for less than k × FinalizeTakeover, and while a processor
// ranked above it was heard finishing the job within FinalizeTakeover. So
// a finalizer that stopped is replaced by the next in rank, one at a
// time, and a live one that takes long (a large output to fetch) is not
// raced by every other processor of the job. A processor that keeps
// saying it is finishing the job without ever writing a verdict is waited
// for at most finalizeLimit after the job is complete.

// finalizerOrder ranks the processors that may finish job id: those with
// a disclosure that are not culprits, by the rendezvous hash of their peer
// ID with the job ID, highest first. The first is the designated
// finalizer. Every node computes the same order from the same records.
func finalizerOrder(id jobs.ID, recs *jobRecords, culprits []string) []string {
	type ranked struct {
		p string
		h [32]byte
	}
	var rs []ranked
	seen := map[string]bool{}
	for _, d := range recs.discl {
		p := d.Processor
		if seen[p] || slices.Contains(culprits, p) {
			continue
		}
		seen[p] = true
		rs = append(rs, ranked{p, hashOf(p, id.String(), "finalizer")})
	}
	slices.SortFunc(rs, func(a, b ranked) int { return bytes.Compare(b.h[:], a.h[:]) })
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.p
	}
	return out
}

// earlyJudge reports whether this processor is the one expected to judge
// js while some MicroJob has no disclosure yet (to catch a culprit or a
// silent committer early): of itself and the processors heard working on
// the job (progress messages) that are still alive, the one with the
// highest finalizer hash (finalizerOrder's hash). The others judge such a
// job lateJudge times less often, in case it is gone: every processor
// judging a large job all the time repeated the same work on each.
func (w *Worker) earlyJudge(js *jobState, now time.Time) bool {
	id := js.plan.JobID.String()
	w.mu.Lock()
	active := maps.Clone(js.active)
	w.mu.Unlock()
	best := hashOf(w.self, id, "finalizer")
	for p, last := range active {
		if p == w.self {
			continue
		}
		if h := hashOf(p, id, "finalizer"); bytes.Compare(h[:], best[:]) > 0 && w.alive(js, p, last, now) {
			return false
		}
	}
	return true
}

// lateJudge is how many times less often a processor that is not
// earlyJudge's choice judges a job not yet fully disclosed.
const lateJudge = 10

// designatedFinalizer is the processor expected to finish job id: the
// first of finalizerOrder, "" when there is none.
func designatedFinalizer(id jobs.ID, recs *jobRecords, culprits []string) string {
	if order := finalizerOrder(id, recs, culprits); len(order) > 0 {
		return order[0]
	}
	return ""
}

// finalizeLimit is how long after a job is complete heard "finalizing"
// messages keep a processor standing by.
func (c Config) finalizeLimit() time.Duration {
	return 2*c.RerunTimeout + hintLife*c.finalizeTakeover()
}

// standby reports whether this node stands by for another processor to
// finish js, complete for waited at now with finalizer order order, and
// until when it does so before it judges the job again.
func (w *Worker) standby(js *jobState, order []string, waited time.Duration, now time.Time) (time.Time, bool) {
	rank := slices.Index(order, w.self)
	if rank == 0 || len(order) == 0 {
		return time.Time{}, false
	}
	if rank < 0 {
		rank = len(order) // no disclosure of its own: last
	}
	takeover := w.cfg.finalizeTakeover()
	if turn := time.Duration(rank) * takeover; waited < turn {
		return now.Add(turn - waited), true
	}
	if waited >= w.cfg.finalizeLimit() {
		return time.Time{}, false
	}
	var last time.Time
	w.mu.Lock()
	for _, p := range order[:rank] {
		if at := js.finalizing[p]; at.After(last) {
			last = at
		}
	}
	w.mu.Unlock()
	if now.Sub(last) < takeover {
		return last.Add(takeover), true
	}
	return time.Time{}, false
}

// sayFinalizing tells js's Job channel that this node is finishing the
// job, at most once per quarter of FinalizeTakeover.
func (w *Worker) sayFinalizing(ctx context.Context, js *jobState, now time.Time) {
	w.mu.Lock()
	t := js.topic
	due := now.Sub(js.saidFinalizing) >= w.cfg.finalizeTakeover()/4
	if due {
		js.saidFinalizing = now
	}
	w.mu.Unlock()
	if t == nil {
		t = w.jobChannel(ctx, js)
	}
	if due && t != nil {
		_ = t.Publish(ctx, jobs.ChannelMsg{Kind: jobs.KindFinalizing, JobID: js.plan.JobID.String(), Processor: w.self})
	}
}

// keepSayingFinalizing says that this node is finishing js until stop is
// called: for work that holds the settle loop, such as the output
// assembly.
func (w *Worker) keepSayingFinalizing(ctx context.Context, js *jobState) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(w.cfg.finalizeTakeover() / 4)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				w.sayFinalizing(ctx, js, now)
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
