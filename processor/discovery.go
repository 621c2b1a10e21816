package processor

import (
	"context"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// listen handles the Jobs channel: job announcements, queries for open
// jobs, and progress.
func (w *Worker) listen(ctx context.Context) {
	defer w.wg.Done()
	answers := jobs.QueryAnswers{Window: w.cfg.ProgressWindow}
	for {
		m, err := w.topic.Next(ctx)
		if err != nil {
			return
		}
		switch m.Value.Kind {
		case jobs.KindJob:
			info, err := jobs.Decode(m.Value.Job)
			if err == nil {
				w.learn(info, !m.Local)
			}
		case jobs.KindQuery:
			if !m.Local && answers.Due(w.now()) {
				w.announceOpen(ctx)
			}
		case jobs.KindProgress:
			w.poke()
		}
	}
}

// queryEvery is how often a worker that holds jobs waiting out its
// catch-up asks the Jobs channel for open jobs (queryWhileCatchingUp).
const queryEvery = 2 * time.Second

// queryWhileCatchingUp asks the Jobs channel for open jobs again, at most
// once per queryEvery (last is when it last did), while a job that this
// node learned from its own replica waits out the catch-up
// (Config.CatchUp); a peer answers at most once per its ProgressWindow
// (jobs.QueryAnswers). The query at start goes out before the node's
// gossipsub meshes form and is often heard by nobody; and a job submitted
// just after a restart, whose announcement went out before the node's
// subscription reached its peers, would otherwise wait the whole
// catch-up while the others run it. A peer that holds it open answers,
// and the job is worked at once (learn).
func (w *Worker) queryWhileCatchingUp(ctx context.Context, last *time.Time) {
	now := w.now()
	if !last.IsZero() && now.Sub(*last) < queryEvery {
		return
	}
	w.mu.Lock()
	waiting := false
	for _, js := range w.known {
		if !js.catchUpUntil.IsZero() && now.Before(js.catchUpUntil) {
			waiting = true
			break
		}
	}
	w.mu.Unlock()
	if !waiting {
		return
	}
	*last = now
	_ = w.topic.Publish(ctx, jobs.ChannelMsg{Kind: jobs.KindQuery})
}

// announceOpen answers a query with every job this node knows unfinished.
func (w *Worker) announceOpen(ctx context.Context) {
	v := w.dview.Load()
	w.mu.Lock()
	var open []*jobs.JobInfo
	for _, js := range w.known {
		if !js.finished && !v.Settled(js.plan().JobID) {
			open = append(open, js.info)
		}
	}
	w.mu.Unlock()
	for _, info := range open {
		_ = w.topic.Publish(ctx, jobs.ChannelMsg{Kind: jobs.KindJob, Job: info.Encode()})
	}
}

// refreshSoon asks for a new dispatch view now, outside the FactsEvery
// rhythm; asks made while one is being taken give one more after it.
func (w *Worker) refreshSoon() {
	select {
	case w.refresh <- struct{}{}:
	default:
	}
}

// learn records a job seen on the channel or in the store; announced
// says a peer announced it open on the channel.
func (w *Worker) learn(info *jobs.JobInfo, announced bool) {
	id := info.ID()
	w.mu.Lock()
	defer w.mu.Unlock()
	if js, ok := w.known[id]; ok {
		if announced && !js.catchUpUntil.IsZero() {
			js.catchUpUntil = time.Time{}
			w.joinStoreLocked(js, false)
			w.poke()
		}
		return
	}
	plan, err := jobs.Slice(info)
	if err != nil {
		w.log.Warn("ignoring a job that does not slice", "job", id, "err", err)
		return
	}
	js := (&jobState{info: info, learnedAt: w.now(),
		progress: windowBatch{full: jobs.MaxProgressMicros}, asked: windowBatch{once: true}}).withPlan(plan)
	if !announced && js.learnedAt.Before(w.caughtUp) {
		js.catchUpUntil = w.caughtUp
	}
	if info.Requirements.Replicas > 1 {
		// A group job is checked by its replicas: its verifiers come
		// from the public seed commitment at once.
		checked, err := plan.WithChecks(info.SeedCommitment)
		if err != nil {
			w.log.Warn("ignoring a job that does not slice", "job", id, "err", err)
			return
		}
		js.withPlan(checked)
		js.checks = finish.CheckPublic
		w.m.checks.WithLabelValues(finish.CheckPublic.String()).Inc()
	}
	w.known[id] = js
	w.log.Info("job discovered", "job", id, "microjobs", plan.NumMicroJobs(), "macrojobs", len(plan.Macros))
	if js.catchUpUntil.IsZero() {
		w.joinStoreLocked(js, !announced)
	}
	// A worker waiting in a room comes back to run the new job's
	// verifier MicroJobs due here (verifiers.go).
	w.stopWaitsLocked()
	w.poke()
}

// joinStoreLocked joins js's job store (Params.Jobs), in the background,
// where this processor could work the job: it serves the job's hardware
// and limits, and the deadline is ahead (a job past it is refunded, not
// worked). A job learned from the store rather than announced (late)
// whose outcome summary the mesh store holds is over, and its records are
// not fetched: a restarted node or a new one reading the mesh's history
// joins no settled job. A summary does not keep a node out of a job that
// a peer announces open. w.mu is held.
func (w *Worker) joinStoreLocked(js *jobState, late bool) {
	info, id := js.info, js.plan().JobID
	if w.p.Jobs == nil || !w.now().Before(time.Unix(info.Deadline, 0)) || !w.serves(info) || microjob.Exceeds(info, w.cfg.Wasm) {
		return
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		if late {
			if sums, err := w.p.Store.Query(w.runCtx, records.SummaryPrefix(id)); err == nil && len(sums) > 0 {
				return
			}
		}
		if err := w.p.Jobs.Join(w.runCtx, id); err != nil && w.runCtx.Err() == nil {
			w.log.Warn("joining the job's store", "job", id, "err", err)
		}
	}()
}

// serves reports whether this processor meets the job's hardware
// requirements: the GPU model, if any, and the VRAM.
func (w *Worker) serves(info *jobs.JobInfo) bool {
	r := info.Requirements
	return (r.GPUModel == "" || r.GPUModel == w.cfg.CardModel) && w.cfg.VRAMMiB >= r.MinVRAMMiB
}

// jobLevelKey reports whether key is a job's own record or one directly
// under it (verdict, aborted, ...), not one of its MicroJobs' records.
func jobLevelKey(key string) bool {
	rest, ok := strings.CutPrefix(key, records.JobsPrefix+"/")
	return ok && strings.Count(rest, "/") <= 1
}

// jobInfoKey reports whether key is a job's JobInfo record, /jobs/<id>.
func jobInfoKey(key string) bool {
	rest, ok := strings.CutPrefix(key, records.JobsPrefix+"/")
	return ok && rest != "" && !strings.Contains(rest, "/")
}

// syncKnown reads jobs and verdicts from the store, which catches what the
// channel and the watch missed (a watch overflow, records that arrived
// before the worker started).
func (w *Worker) syncKnown(ctx context.Context) {
	recs, err := w.p.Store.QueryKeys(ctx, records.JobsPrefix, func(k string) bool { return jobLevelKey(k) || askKey(k) })
	if err != nil {
		return
	}
	for _, r := range recs {
		w.noticeRecord(r)
	}
}

// noticeRecord learns a job from its JobInfo record, and joins a job's
// store when an ask record names this processor; other records are
// ignored. (A verdict finishes a job only once this node's judgement
// agrees with it: finalize, which every store change wakes.)
func (w *Worker) noticeRecord(r crdt.Record) {
	switch r.Type {
	case records.JobType:
		if k, err := records.Parse(r.Key); err == nil && w.knows(k.Job) {
			// Known already: syncKnown reads every JobInfo the store
			// holds, and decoding each again would cost a node in
			// proportion to the mesh's history.
			return
		}
		if info, err := jobs.Decode(r.Payload); err == nil && records.JobKey(info.ID()) == r.Key {
			w.learn(info, false)
		}
	case records.AbortedType:
		if k, err := records.Parse(r.Key); err == nil && k.Type == records.AbortedType {
			if _, err := records.DecodeJobAborted(r.Key, r.Payload); err == nil {
				w.markAborted(k.Job)
			}
		}
	case records.DisputeType, records.CheckType, records.RedoType:
		w.interruptWaits()
	case records.AskType:
		w.noticeAsk(r)
	}
}

// knows reports whether the worker has learnt job id.
func (w *Worker) knows(id jobs.ID) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.known[id]
	return ok
}

// candidates returns the unfinished jobs this processor can serve, in the
// order it takes them (orderJobs: best task value first among the queue
// groups it serves).
func (w *Worker) candidates(now time.Time) []*jobState {
	v := w.dview.Load()
	if v.Kicked(w.self) {
		// Kicked out by the QoS rules: the mesh ignores this processor's
		// requests, so it does not make any.
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*jobState
	for _, js := range w.known {
		if !js.catchUpUntil.IsZero() && !now.Before(js.catchUpUntil) {
			js.catchUpUntil = time.Time{}
			w.joinStoreLocked(js, true)
		}
		// A job settled on chain that this node saw no verdict of (it
		// learned the job from the mesh store after its records were
		// gone) is over here too.
		if js.finished || js.aborted || v.Settled(js.plan().JobID) || failedLocked(js) || now.Sub(js.failed) < 30*time.Second || !js.catchUpUntil.IsZero() || w.overLimits(js) {
			continue
		}
		out = append(out, js)
	}
	return orderJobs(w.cfg.Dispatch, v, w.selfNode(), out)
}
