package processor

import (
	"context"
	"path"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
	"github.com/jobmesh/jobmesh/membership"
	"github.com/jobmesh/jobmesh/meshview"
)

// orderJobs is meshview.OrderJobs over job states: the jobs self can
// serve, in the order it takes them, replicated ones while v has enough
// processors of self's card model for them.
func orderJobs(cfg dispatch.Config, v *meshview.View, self dispatch.Node, list []*jobState) []*jobState {
	return meshview.OrderJobs(cfg, self, v.GroupCheck(), list, func(js *jobState) (*jobs.JobInfo, *jobs.Plan) { return js.info, js.plan() })
}

// keepFacts refreshes the dispatch view every FactsEvery.
func (w *Worker) keepFacts(ctx context.Context) {
	defer w.wg.Done()
	t := time.NewTicker(w.cfg.FactsEvery)
	defer t.Stop()
	for {
		w.enforceCap(ctx, w.refreshView(ctx))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.refresh:
		}
	}
}

// watchNodes asks for a new dispatch view as soon as an advertisement of a
// processor the view lacks arrives, rather than at the next FactsEvery:
// processors that rank one another from different views do the same work
// twice (rankedAt).
func (w *Worker) watchNodes(ctx context.Context, changes <-chan crdt.Change) {
	defer w.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case c, ok := <-changes:
			if !ok {
				return
			}
			if c.Kind == crdt.ChangeOverflow {
				w.refreshSoon()
				continue
			}
			if _, known := w.dview.Load().Processor(path.Base(c.Key)); c.Kind == crdt.ChangePut && !known {
				w.refreshSoon()
			}
		}
	}
}

// refreshView takes a new meshview.Facts snapshot; a failed read keeps
// the last.
func (w *Worker) refreshView(ctx context.Context) *meshview.View {
	// Without a chain the QoS ledger replays the jobs finished here; with
	// one, any known job may be settled (one this node saw no verdict of
	// among them), and its checked summary says so.
	w.mu.Lock()
	var ids []jobs.ID
	for id, js := range w.known {
		if js.finished || w.p.Chain != nil {
			ids = append(ids, id)
		}
	}
	w.mu.Unlock()
	v, err := w.facts.View(ctx, ids)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("reading dispatch facts", "err", err)
		}
		return w.dview.Load()
	}
	if old := w.dview.Load(); old == nil || old.Kicked(w.self) != v.Kicked(w.self) {
		if k, ok := v.KickOf(w.self); ok {
			w.log.Warn("kicked out by the QoS rules: taking no work", "reason", k.Reason, "task", k.TaskID)
		}
	}
	if meshview.Grew(w.dview.Load(), v) {
		w.grewAt.Store(w.now().UnixNano())
	}
	w.dview.Store(v)
	kicked := 0
	for _, p := range v.Processors {
		if p.Kick != nil {
			kicked++
		}
	}
	w.m.live.Set(float64(v.Live()))
	w.m.kicked.Set(float64(kicked))
	return v
}

// rankedAt returns when js's ranks (firstOwners, verifierRunners) were
// first used, and false while they are not to be used yet: while the
// dispatch view gained a processor within the last HeadStart and the job
// was discovered less than HeadStart ago. Processors that start together,
// or a job that arrives as they start, would otherwise rank from views
// that list different processors, each naming itself to run the same
// verifier or to open the same room. A mesh whose membership is steady
// ranks at once; one that keeps growing holds a new job back by at most
// its HeadStart.
func (w *Worker) rankedAt(js *jobState, now time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !js.rankedAt.IsZero() {
		return js.rankedAt, true
	}
	if now.Sub(time.Unix(0, w.grewAt.Load())) < w.cfg.HeadStart && now.Sub(js.learnedAt) < w.cfg.HeadStart {
		return time.Time{}, false
	}
	js.rankedAt = now
	return now, true
}

// View returns the latest dispatch snapshot: the live processors with
// their grades, stakes, QoS scores and selection weights. Nil before the
// first one.
func (w *Worker) View() *meshview.View { return w.dview.Load() }

// Facts returns the worker's dispatch facts reader.
func (w *Worker) Facts() *meshview.Facts { return w.facts }

// weightedChooser picks a room's next queue owner among the requesters
// with probability proportional to their job-independent selection
// weight W (no locality), drawn from the queue's public seed. It is the
// worker's default Config.Room.Queue.Chooser; each of the worker's own
// rooms replaces it with a jobChooser for its job (roomConfig).
type weightedChooser struct{ w *Worker }

var _ macrojob.Chooser = weightedChooser{}

// Choose implements macrojob.Chooser.
func (c weightedChooser) Choose(cands []macrojob.PeerID, seed []byte) int {
	return c.w.dview.Load().ChooseOwner(dispatch.Job{}, cands, seed)
}

// jobChooser picks a room's next queue owner among the requesters with
// probability proportional to their selection weight W for the room's job
// (meshview.View.JobWeights: locality boost and narrowing included),
// drawn from the queue's public seed. Kicked-out processors weigh 0 and
// are never picked while an unkicked requester waits; a requester that is
// not live yet (its advertisement has not arrived) weighs as little as
// the lightest live processor. When every requester weighs 0 the pick is
// uniform, so a queue never stalls.
type jobChooser struct {
	w   *Worker
	job dispatch.Job
}

var _ macrojob.Chooser = jobChooser{}

// Choose implements macrojob.Chooser.
func (c jobChooser) Choose(cands []macrojob.PeerID, seed []byte) int {
	return c.w.dview.Load().ChooseOwner(c.job, cands, seed)
}

// rerunCandidates are the processors this node holds eligible to re-run
// a block of job info (finish.Records.Candidates): the advertised
// processors (finish.Processors), with a chain those whose bound wallet
// had staked before the job (membership.RerunCandidates), without one all
// of them by peer ID.
func (w *Worker) rerunCandidates(ctx context.Context, info *jobs.JobInfo) ([]finish.Candidate, error) {
	procs, err := w.processors(ctx)
	if err != nil {
		return nil, err
	}
	if w.stakers == nil {
		return finish.PeerCandidates(procs), nil
	}
	return membership.RerunCandidates(w.boundWallet, w.stakers)(ctx, info, procs)
}

// boundWallet is the wallet bound to peer as this node verified it
// (membership.Wallets.Bound).
func (w *Worker) boundWallet(_ context.Context, peer string) (string, bool, error) {
	wallet, ok := w.wallets.Bound(peer)
	return wallet, ok, nil
}

// unable reports whether candidate p cannot work now (canWork): the
// finalizer asks it dropped at once, so that the vote does not wait
// RerunTimeout for it; its answer still counts if it comes.
func (w *Worker) unable(p string) bool {
	if p == w.self {
		return false
	}
	pv, ok := w.dview.Load().Processor(p)
	return !ok || !w.canWork(pv)
}

// roomConfig is the room configuration for a room of js: the worker's,
// with the queue-owner chooser weighing for the job, unless
// Config.Room.Queue.Chooser was set (then it is used as given).
func (w *Worker) roomConfig(js *jobState) macrojob.RoomConfig {
	rc := w.cfg.Room
	if _, ok := rc.Queue.Chooser.(weightedChooser); ok {
		rc.Queue.Chooser = w.ChooserFor(meshview.DispatchJob(js.info, js.plan()))
	}
	if rc.Queue.Avoid == nil {
		rc.Queue.Avoid = w.avoidSelfCheck(js)
	}
	return rc
}

// avoidSelfCheck is the rooms' Avoid rule: a processor does not lock a
// MacroJob's verifier MicroJob beside a regular MicroJob it checks (held,
// or already run here), nor such a regular one beside the verifier. One
// processor running both proves nothing, and the job then pays for two
// independent re-runs of each such block (self-checks).
func (w *Worker) avoidSelfCheck(js *jobState) func(macrojob.ID, []macrojob.ID) bool {
	return func(id macrojob.ID, taken []macrojob.ID) bool {
		a, err := jobs.ParseHash(string(id))
		if err != nil {
			return false
		}
		conflicts := func(b jobs.ID) bool {
			return meshview.VerifierChecks(js.plan(), a, b) || meshview.VerifierChecks(js.plan(), b, a)
		}
		for _, t := range taken {
			if b, err := jobs.ParseHash(string(t)); err == nil && conflicts(b) {
				return true
			}
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		for b := range js.mine {
			if conflicts(b) {
				return true
			}
		}
		return false
	}
}

// Chooser returns the job-independent queue-owner chooser (no locality),
// for wrappers that audit choices. The worker's own rooms, when
// Config.Room.Queue.Chooser is nil, use ChooserFor their job.
func (w *Worker) Chooser() macrojob.Chooser { return weightedChooser{w} }

// ChooserFor returns the queue-owner chooser of a room of job: weighted
// by the job's selection weights.
func (w *Worker) ChooserFor(job dispatch.Job) macrojob.Chooser {
	return jobChooser{w: w, job: job}
}

// SelectionWeights are the job-independent weights the worker's choosers
// give ids now: a live processor's W, 0 when kicked out, the least
// positive live weight when not live.
func (w *Worker) SelectionWeights(ids []string) []float64 {
	return w.dview.Load().JobWeights(dispatch.Job{}, ids)
}

// JobSelectionWeights are the weights choices made for job give ids now
// (meshview.View.JobWeights over the latest view).
func (w *Worker) JobSelectionWeights(job dispatch.Job, ids []string) []float64 {
	return w.dview.Load().JobWeights(job, ids)
}
