package processor

import (
	"context"
	"math/big"
	"path"
	"slices"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
)

// DispatchJob is what dispatching knows about a job, taken from its JobInfo
// alone, so every node derives the same value: the escrowed price, the
// requirements, and the task size in pricing units (TaskSize, or the
// number of data blocks when the job gives none).
func DispatchJob(info *jobs.JobInfo, plan *jobs.Plan) dispatch.Job {
	units := info.TaskSize
	if units == 0 {
		units = plan.NumBlocks
	}
	price := info.PriceWei
	if price == nil {
		price = new(big.Int)
	}
	return dispatch.Job{
		ID:       plan.JobID.String(),
		Price:    price,
		MinVRAM:  info.Requirements.MinVRAMMiB,
		GPUModel: info.Requirements.GPUModel,
		Models:   slices.Clone(info.Requirements.ModelCIDs),
		Units:    units,
	}
}

// orderJobs returns the jobs self can serve in the order it takes them:
// open jobs are grouped by VRAM and GPU model ("Any" when none) and each
// group is ordered by task value; self repeatedly takes the best head
// among the groups it can serve (seed 001 dequeue). The order depends only
// on the JobInfo records and cfg. A job whose value cannot be computed
// (its estimated time overflows) comes last, by ID, if self can serve it.
// A job asking for more replicas than cfg.MaxReplicas is not taken.
func orderJobs(cfg dispatch.Config, self dispatch.Node, list []*jobState) []*jobState {
	q, err := dispatch.NewQueue(cfg)
	if err != nil {
		// The config was validated by New; keep working in ID order.
		q = nil
	}
	byID := make(map[string]*jobState, len(list))
	var rest []*jobState
	for _, js := range list {
		if int(js.info.Requirements.Replicas) > cfg.MaxReplicas {
			// The mesh's dispatch parameters cap replicated jobs
			// (seed 000: GPT tasks on 3 nodes of one card model).
			continue
		}
		j := DispatchJob(js.info, js.plan)
		byID[j.ID] = js
		if q == nil || q.Push(j) != nil {
			if servable(self, j) {
				rest = append(rest, js)
			}
		}
	}
	out := make([]*jobState, 0, len(list))
	for q != nil {
		j, ok := q.Next(self, nil)
		if !ok {
			break
		}
		out = append(out, byID[j.ID])
	}
	slices.SortFunc(rest, func(a, b *jobState) int { return compareIDs(a.plan.JobID, b.plan.JobID) })
	return append(out, rest...)
}

// servable reports whether node meets job's requirements: enough VRAM and
// the required GPU model, if any.
func servable(node dispatch.Node, job dispatch.Job) bool {
	if job.GPUModel != "" && job.GPUModel != node.CardModel {
		return false
	}
	return node.VRAM >= job.MinVRAM
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

// refreshView takes a new Facts snapshot; a failed read keeps the last.
func (w *Worker) refreshView(ctx context.Context) *View {
	w.mu.Lock()
	var finished []jobs.ID
	for id, js := range w.known {
		if js.finished {
			finished = append(finished, id)
		}
	}
	w.mu.Unlock()
	v, err := w.facts.View(ctx, finished)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("reading dispatch facts", "err", err)
		}
		return w.dview.Load()
	}
	if old := w.dview.Load(); old == nil || old.Kicked(w.self) != v.Kicked(w.self) {
		if k, ok := v.kicks[w.self]; ok {
			w.log.Warn("kicked out by the QoS rules: taking no work", "reason", k.Reason, "task", k.TaskID)
		}
	}
	if grew(w.dview.Load(), v) {
		w.grewAt.Store(time.Now().UnixNano())
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

// grew reports whether view v lists a processor that old does not (any,
// when old is nil).
func grew(old, v *View) bool {
	if old == nil {
		return true
	}
	for _, p := range v.Processors {
		if _, ok := old.Processor(p.ID); !ok {
			return true
		}
	}
	return false
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
func (w *Worker) View() *View { return w.dview.Load() }

// Facts returns the worker's dispatch facts reader.
func (w *Worker) Facts() *Facts { return w.facts }

// weightedChooser picks a room's next queue owner among the requesters
// with probability proportional to their job-independent selection
// weight W (no locality), drawn from the queue's public seed. It is the
// worker's default Config.Room.Queue.Chooser; each of the worker's own
// rooms replaces it with a jobChooser for its job (roomConfig).
type weightedChooser struct{ w *Worker }

var _ macrojob.Chooser = weightedChooser{}

// Choose implements macrojob.Chooser.
func (c weightedChooser) Choose(cands []macrojob.PeerID, seed []byte) int {
	return choose(c.w.dview.Load(), nil, cands, seed)
}

// jobChooser picks a room's next queue owner among the requesters with
// probability proportional to their selection weight W for the room's job
// (View.JobWeights: locality boost and narrowing included), drawn from the
// queue's public seed. Kicked-out processors weigh 0 and are never picked
// while an unkicked requester waits; a requester that is not live yet
// (its advertisement has not arrived) weighs as little as the lightest
// live processor. When every requester weighs 0 the pick is uniform, so a
// queue never stalls.
type jobChooser struct {
	w   *Worker
	job dispatch.Job
}

var _ macrojob.Chooser = jobChooser{}

// Choose implements macrojob.Chooser.
func (c jobChooser) Choose(cands []macrojob.PeerID, seed []byte) int {
	return choose(c.w.dview.Load(), &c.job, cands, seed)
}

func choose(v *View, job *dispatch.Job, cands []macrojob.PeerID, seed []byte) int {
	ids := make([]string, len(cands))
	for i, p := range cands {
		ids[i] = string(p)
	}
	if i, ok := weightedPick(v, job, ids, seed); ok {
		return i
	}
	return macrojob.SeededChooser{}.Choose(cands, seed)
}

// weightedPick draws one of ids by selection weight for job from seed;
// false when every one weighs 0.
func weightedPick(v *View, job *dispatch.Job, ids []string, seed []byte) (int, bool) {
	i, err := dispatch.Choose(candidateWeights(v, job, ids), seed)
	if err != nil {
		return 0, false
	}
	return i, true
}

// candidateWeights are the selection weights of ids for job
// (View.JobWeights); a nil job weighs without locality.
func candidateWeights(v *View, job *dispatch.Job, ids []string) []float64 {
	if job == nil {
		return v.JobWeights(dispatch.Job{}, ids)
	}
	return v.JobWeights(*job, ids)
}

// pickThird chooses a processor among pool (sorted peer IDs) for a
// dispute's third run or a self-check re-run of js, by selection weight
// for the job, from seed. Kicked-out processors are never chosen;
// processors not live weigh like the lightest live one. When no one in
// pool has any weight (this node's view does not weigh them yet), every
// processor not kicked out weighs the same. False when everyone in pool
// is kicked out.
func (w *Worker) pickThird(js *jobState, pool []string, seed []byte) (int, bool) {
	job := DispatchJob(js.info, js.plan)
	v := w.dview.Load()
	if i, ok := weightedPick(v, &job, pool, seed); ok {
		return i, true
	}
	even := make([]float64, len(pool))
	for i, p := range pool {
		if !v.Kicked(p) {
			even[i] = 1
		}
	}
	i, err := dispatch.Choose(even, seed)
	return i, err == nil
}

// roomConfig is the room configuration for a room of js: the worker's,
// with the queue-owner chooser weighing for the job, unless
// Config.Room.Queue.Chooser was set (then it is used as given).
func (w *Worker) roomConfig(js *jobState) macrojob.RoomConfig {
	rc := w.cfg.Room
	if _, ok := rc.Queue.Chooser.(weightedChooser); ok {
		rc.Queue.Chooser = w.ChooserFor(DispatchJob(js.info, js.plan))
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
		conflicts := func(b jobs.ID) bool { return checks(js.plan, a, b) || checks(js.plan, b, a) }
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

// checks reports whether verifier is a verifier MicroJob of plan that
// takes a block of regular.
func checks(plan *jobs.Plan, verifier, regular jobs.ID) bool {
	v, err := plan.MicroJob(verifier)
	if err != nil || !v.Verifier {
		return false
	}
	for _, src := range v.Sources {
		if plan.Macros[v.Macro].Micros[src.Slot].ID == regular {
			return true
		}
	}
	return false
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
	return candidateWeights(w.dview.Load(), nil, ids)
}

// JobSelectionWeights are the weights choices made for job give ids now
// (View.JobWeights over the latest view).
func (w *Worker) JobSelectionWeights(job dispatch.Job, ids []string) []float64 {
	return candidateWeights(w.dview.Load(), &job, ids)
}
