package jobindex

import (
	"context"

	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
)

// Progress returns job id's progress (finish.Progress), for a job of
// replicas processors per MicroJob, loading the job's index when it is
// new or stale.
func (x *Index) Progress(ctx context.Context, id jobs.ID, replicas int) (finish.Progress, error) {
	if p, ok := x.LoadedProgress(id, replicas); ok {
		return p, nil
	}
	recs, err := x.Records(ctx, id)
	if err != nil {
		return finish.Progress{}, err
	}
	if p, ok := x.LoadedProgress(id, replicas); ok {
		return p, nil
	}
	return finish.ProgressOf(recs, replicas), nil
}

// LoadedProgress returns job id's progress when its index is loaded,
// without loading it. It is built from the index's counters once per
// change of a commitment or a disclosure.
func (x *Index) LoadedProgress(id jobs.ID, replicas int) (finish.Progress, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	ji := x.jobs[id]
	if ji == nil || !ji.loaded {
		return finish.Progress{}, false
	}
	if ji.tally == nil || ji.tallyAt != ji.tallyVer {
		p := ji.sorted.Progress(len(ji.disclosed))
		ji.tally, ji.tallyAt = &p, ji.tallyVer
	}
	return ji.tally.WithReplicas(replicas), true
}
