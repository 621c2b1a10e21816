package processor

import (
	"context"
	"math/big"
	"slices"
	"time"

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
func orderJobs(cfg dispatch.Config, self dispatch.Node, list []*jobState) []*jobState {
	q, err := dispatch.NewQueue(cfg)
	if err != nil {
		// The config was validated by New; keep working in ID order.
		q = nil
	}
	byID := make(map[string]*jobState, len(list))
	var rest []*jobState
	for _, js := range list {
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

// View returns the latest dispatch snapshot: the live processors with
// their grades, stakes, QoS scores and selection weights. Nil before the
// first one.
func (w *Worker) View() *View { return w.dview.Load() }

// Facts returns the worker's dispatch facts reader.
func (w *Worker) Facts() *Facts { return w.facts }

// weightedChooser picks a room's next queue owner among the requesters
// with probability proportional to their selection weight W, drawn from
// the queue's public seed. Kicked-out processors weigh 0 and are never
// picked while an unkicked requester waits; a requester that is not live
// yet (its advertisement has not arrived) weighs as little as the lightest
// live processor. When every requester weighs 0 the pick is uniform, so a
// queue never stalls.
type weightedChooser struct{ w *Worker }

var _ macrojob.Chooser = weightedChooser{}

// Choose implements macrojob.Chooser.
func (c weightedChooser) Choose(cands []macrojob.PeerID, seed []byte) int {
	ids := make([]string, len(cands))
	for i, p := range cands {
		ids[i] = string(p)
	}
	if i, ok := weightedPick(c.w.dview.Load(), ids, seed); ok {
		return i
	}
	return macrojob.SeededChooser{}.Choose(cands, seed)
}

// weightedPick draws one of ids by selection weight from seed; false when
// every one weighs 0.
func weightedPick(v *View, ids []string, seed []byte) (int, bool) {
	weights := candidateWeights(v, ids)
	i, err := dispatch.Choose(weights, seed)
	if err != nil {
		return 0, false
	}
	return i, true
}

// candidateWeights are the selection weights of ids: a live processor's
// W, 0 for a kicked-out one, and for one not live the least positive live
// weight (1 when nothing is live).
func candidateWeights(v *View, ids []string) []float64 {
	floor := 0.0
	if v != nil {
		for _, p := range v.Processors {
			if p.Weight > 0 && (floor == 0 || p.Weight < floor) {
				floor = p.Weight
			}
		}
	}
	if floor == 0 {
		floor = 1
	}
	out := make([]float64, len(ids))
	for i, id := range ids {
		switch p, ok := v.Processor(id); {
		case v.Kicked(id):
		case ok:
			out[i] = p.Weight
		default:
			out[i] = floor
		}
	}
	return out
}

// pickThird chooses the third processor of a dispute among pool (sorted
// peer IDs, the disputing pair left out) by selection weight, from seed.
// Kicked-out processors are never chosen; processors not live weigh like
// the lightest live one. False when everyone in pool is kicked out.
func (w *Worker) pickThird(pool []string, seed []byte) (int, bool) {
	v := w.dview.Load()
	if i, ok := weightedPick(v, pool, seed); ok {
		return i, true
	}
	return 0, false
}

// Chooser returns the queue-owner chooser the worker gives its rooms (when
// Config.Room.Queue.Chooser is nil), for wrappers that audit its choices.
func (w *Worker) Chooser() macrojob.Chooser { return weightedChooser{w} }

// SelectionWeights are the weights the worker's choosers give ids now:
// a live processor's W, 0 when kicked out, the least positive live weight
// when not live.
func (w *Worker) SelectionWeights(ids []string) []float64 {
	return candidateWeights(w.dview.Load(), ids)
}
