package meshview

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/models"
)

// maxCachedJobs bounds a view's per-job cache; a view lives for one
// FactsEvery, so the bound only matters with very many open jobs.
const maxCachedJobs = 1024

// jobCache holds what a view derived for each job: the selection weight of
// every live processor (in View.Processors order) and the pre-download
// names. Both depend only on the view and the job, so they are computed
// once per view.
type jobCache struct {
	mu      sync.Mutex
	weights map[string][]float64
	pre     map[string][]dispatch.PreDownload
}

func newJobCache() *jobCache {
	return &jobCache{weights: map[string][]float64{}, pre: map[string][]dispatch.PreDownload{}}
}

// modelsKey names a job's distinct models, sorted: all its weights depend
// on.
func modelsKey(job dispatch.Job) string {
	m := slices.Clone(job.Models)
	slices.Sort(m)
	return strings.Join(slices.Compact(m), "\x00")
}

// liveWeights are the selection weights W = M·S·Q/(S+Q) of the view's
// live processors for job, S normalised over the live processors and M
// the job's locality boost; 0 for a kicked-out processor.
func (v *View) liveWeights(job dispatch.Job) []float64 {
	if v == nil {
		return nil
	}
	if len(job.Models) == 0 {
		out := make([]float64, len(v.Processors))
		for i, p := range v.Processors {
			out[i] = p.Weight
		}
		return out
	}
	key := modelsKey(job)
	if v.jobs != nil {
		v.jobs.mu.Lock()
		w, ok := v.jobs.weights[key]
		v.jobs.mu.Unlock()
		if ok {
			return w
		}
	}
	w := dispatch.Weights(dispatch.Job{Models: job.Models}, v.Nodes())
	for i, p := range v.Processors {
		if p.Kick != nil {
			w[i] = 0
		}
	}
	if v.jobs != nil {
		v.jobs.mu.Lock()
		if len(v.jobs.weights) >= maxCachedJobs {
			clear(v.jobs.weights)
		}
		v.jobs.weights[key] = w
		v.jobs.mu.Unlock()
	}
	return w
}

// JobWeights are the selection weights a choice among ids made for job
// uses (queue owner, dispute third, self-check re-runners). A live
// processor weighs its W for the job, locality boost M included; a
// kicked-out one 0; one not live (its advertisement has not arrived)
// the least positive live weight, or 1 when nothing live weighs more
// than 0. When the job needs models and some candidate weighing above 0
// holds them all on disk, only those holders keep their weight (seed 001
// narrowing); a candidate that is not live is not known to hold them.
// Without models this is the job-independent weight of
// ProcessorView.Weight.
func (v *View) JobWeights(job dispatch.Job, ids []string) []float64 {
	lw := v.liveWeights(job)
	floor := 0.0
	for _, x := range lw {
		if x > 0 && (floor == 0 || x < floor) {
			floor = x
		}
	}
	if floor == 0 {
		floor = 1
	}
	out := make([]float64, len(ids))
	for i, id := range ids {
		switch k, ok := v.index(id); {
		case v.Kicked(id):
		case ok:
			out[i] = lw[k]
		default:
			out[i] = floor
		}
	}
	if len(job.Models) == 0 {
		return out
	}
	narrowed := make([]float64, len(ids))
	held := false
	for i, id := range ids {
		if k, ok := v.index(id); ok && out[i] > 0 && dispatch.HoldsModels(job, v.Processors[k].Node) {
			narrowed[i], held = out[i], true
		}
	}
	if held {
		return narrowed
	}
	return out
}

// index is the position of a live processor in Processors.
func (v *View) index(id string) (int, bool) {
	if v == nil {
		return 0, false
	}
	i, ok := v.byID[id]
	return i, ok
}

// Holders lists the live processors that hold all of job's models on
// disk, by peer ID; every live processor when the job needs none.
func (v *View) Holders(job dispatch.Job) []string {
	if v == nil {
		return nil
	}
	var out []string
	for _, p := range v.Processors {
		if dispatch.HoldsModels(job, p.Node) {
			out = append(out, p.ID)
		}
	}
	return out
}

// PreDownloads names, for each model of job that fewer than
// cfg.MinModelHolders live processors eligible for the job hold, the
// processors that should fetch it: models.PreDownloads over the view's
// live processors (a kicked-out one weighs 0 and is never named), drawn
// from seed, computed once per view and job.
func (v *View) PreDownloads(cfg dispatch.Config, job dispatch.Job, seed []byte) ([]dispatch.PreDownload, error) {
	if v == nil || len(job.Models) == 0 {
		return nil, nil
	}
	key := strconv.Quote(string(seed)) + "\x01" + job.GPUModel + "\x01" + strconv.FormatUint(job.MinVRAM, 10) + "\x01" + modelsKey(job)
	if v.jobs != nil {
		v.jobs.mu.Lock()
		pd, ok := v.jobs.pre[key]
		v.jobs.mu.Unlock()
		if ok {
			return pd, nil
		}
	}
	live := make([]models.Candidate, len(v.Processors))
	for i, p := range v.Processors {
		live[i] = models.Candidate{Node: p.Node, Kicked: p.Kick != nil}
	}
	pd, err := models.PreDownloads(cfg, job, live, seed)
	if err != nil {
		return nil, err
	}
	if v.jobs != nil {
		v.jobs.mu.Lock()
		if len(v.jobs.pre) >= maxCachedJobs {
			clear(v.jobs.pre)
		}
		v.jobs.pre[key] = pd
		v.jobs.mu.Unlock()
	}
	return pd, nil
}
