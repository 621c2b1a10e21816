package meshview

import (
	"bytes"
	"math/big"
	"slices"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
)

// DispatchJob is what dispatching knows about a job, taken from its JobInfo
// alone, so every node derives the same value: the escrowed price, the
// requirements (replicas included: they pick the job's queue group and
// count against the queue cap), and the task size in pricing units
// (TaskSize, or the number of data blocks when the job gives none).
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
		Replicas: int(info.Requirements.Replicas),
	}
}

// OrderJobs returns the jobs of list self can serve in the order it takes
// them; job gives each one's JobInfo and plan. Open jobs are grouped by
// VRAM, GPU model ("Any" when none) and replicas, and each group is
// ordered by task value; self repeatedly takes the best head among the
// groups it can serve (seed 001 dequeue, dispatch.Queue.Best). A group of
// replicated jobs (R > 1) counts only while free says self's card model
// has R processors for it (View.GroupCheck; seed 000: 3 nodes of one card
// model); its jobs are left out otherwise. The order depends only on the
// JobInfo records, cfg and free. A job whose value cannot be computed (its
// estimated time overflows) comes last, by ID, if self can serve it. A job
// asking for more replicas than cfg.MaxReplicas is not taken.
func OrderJobs[T any](cfg dispatch.Config, self dispatch.Node, free dispatch.GroupCheck, list []T, job func(T) (*jobs.JobInfo, *jobs.Plan)) []T {
	q, err := dispatch.NewQueue(cfg)
	if err != nil {
		// The caller validated the config; keep working in ID order.
		q = nil
	}
	type item struct {
		t  T
		id jobs.ID
	}
	byID := make(map[string]T, len(list))
	var rest []item
	for _, t := range list {
		info, plan := job(t)
		if int(info.Requirements.Replicas) > cfg.MaxReplicas {
			// The mesh's dispatch parameters cap replicated jobs
			// (seed 000: GPT tasks on 3 nodes of one card model).
			continue
		}
		j := DispatchJob(info, plan)
		byID[j.ID] = t
		if q == nil || q.Push(j) != nil {
			if servable(self, j) && (j.Replicas <= 1 || (free != nil && free(self.CardModel, j.MinVRAM, j.Replicas))) {
				rest = append(rest, item{t, plan.JobID})
			}
		}
	}
	out := make([]T, 0, len(list))
	for q != nil {
		j, ok := q.Next(self, free)
		if !ok {
			break
		}
		out = append(out, byID[j.ID])
	}
	slices.SortFunc(rest, func(a, b item) int { return compareIDs(a.id, b.id) })
	for _, r := range rest {
		out = append(out, r.t)
	}
	return out
}

// GroupCheck is the dispatch.GroupCheck of the mesh's job order: whether
// the view lists at least r processors of a card model with VRAM ≥ vram
// that weigh more than 0 (live, not kicked out, staked), the processors
// ChooseGroup draws a replicated job's group from. The mesh keeps no busy
// flag every node agrees on (a processor takes a job when its own work
// allows), so the eligible processors stand for the seed's free ones.
func (v *View) GroupCheck() dispatch.GroupCheck {
	return func(model string, vram uint64, r int) bool {
		if v == nil {
			return false
		}
		n := 0
		for _, p := range v.Processors {
			if p.CardModel == model && p.VRAM >= vram && p.Weight > 0 {
				n++
			}
		}
		return n >= r
	}
}

// Servable reports whether a live processor of v meets job's hardware
// requirements.
func (v *View) Servable(job dispatch.Job) bool {
	if v == nil {
		return false
	}
	for _, p := range v.Processors {
		if servable(p.Node, job) {
			return true
		}
	}
	return false
}

// servable reports whether node meets job's requirements: enough VRAM and
// the required GPU model, if any.
func servable(node dispatch.Node, job dispatch.Job) bool {
	if job.GPUModel != "" && job.GPUModel != node.CardModel {
		return false
	}
	return node.VRAM >= job.MinVRAM
}

// compareIDs orders job IDs by their bytes.
func compareIDs(a, b jobs.ID) int { return bytes.Compare(a[:], b[:]) }

// ChooseOwner picks a room's next queue owner among cands with
// probability proportional to their selection weight for job
// (JobWeights; a job without models weighs without locality), drawn from
// the queue's public seed. When every candidate weighs 0 the pick is
// uniform (macrojob.SeededChooser), so a queue never stalls.
func (v *View) ChooseOwner(job dispatch.Job, cands []macrojob.PeerID, seed []byte) int {
	ids := make([]string, len(cands))
	for i, p := range cands {
		ids[i] = string(p)
	}
	if i, ok := v.Pick(job, ids, seed); ok {
		return i
	}
	return macrojob.SeededChooser{}.Choose(cands, seed)
}

// Pick draws one of ids by selection weight for job (JobWeights) from
// seed; false when every one weighs 0.
func (v *View) Pick(job dispatch.Job, ids []string, seed []byte) (int, bool) {
	i, err := dispatch.Choose(v.JobWeights(job, ids), seed)
	if err != nil {
		return 0, false
	}
	return i, true
}

// Grew reports whether view v lists a processor that old does not (any,
// when old is nil): processors that rank one another from views that
// differ so do the same work twice.
func Grew(old, v *View) bool {
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

// VerifierChecks reports whether verifier is a verifier MicroJob of plan
// that takes a block of regular: one processor running both proves
// nothing.
func VerifierChecks(plan *jobs.Plan, verifier, regular jobs.ID) bool {
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
