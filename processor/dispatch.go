package processor

import (
	"math/big"
	"slices"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
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
