package meshview

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/probe"
)

// replayTask is one point of the QoS replay: a finished job's task
// outcomes at its verdict seq or release block time, or a probe's at its challenge seq plus the
// deadline.
type replayTask struct {
	at    time.Time
	job   *jobs.ID // nil for a probe
	probe string   // the probe's task ID
	tasks []dispatch.TaskOutcome
}

// replayOrder merges finished jobs and probes in time order; ties go
// jobs first, then by job ID or probe task ID, so every node replays the
// same order.
func replayOrder(done []*finishedJob, probes []probe.Task) []replayTask {
	out := make([]replayTask, 0, len(done)+len(probes))
	for _, j := range done {
		out = append(out, replayTask{at: j.at, job: &j.id, tasks: j.tasks})
	}
	for _, p := range probes {
		out = append(out, replayTask{at: p.End, probe: p.Outcome.TaskID, tasks: []dispatch.TaskOutcome{p.Outcome}})
	}
	slices.SortStableFunc(out, func(a, b replayTask) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		switch {
		case a.job != nil && b.job != nil:
			return compareIDs(*a.job, *b.job)
		case a.job != nil:
			return -1
		case b.job != nil:
			return 1
		}
		return cmp.Compare(a.probe, b.probe)
	})
	return out
}

// replayed is what the replay leaves.
type replayed struct {
	ledger *dispatch.Ledger
	// kicks are the kicks in force.
	kicks map[string]dispatch.Kick
	// tasks is how many task outcomes were recorded.
	tasks int
	// speedAt is, for each processor, when its latest scored task ended
	// since it (re)joined.
	speedAt map[string]time.Time
}

// replay feeds the task outcomes, in replay order, to a new ledger. A
// kicked processor rejoins (dispatch.Ledger.Rejoin: its history starts
// afresh) at the first point of the replay after both its kick and its
// advertised start: before the first task whose time is later than its
// start, or at the end. Verdict seqs, challenge seqs and start times are
// all read from the replicated records, so every node rejoins it at the
// same place.
func replay(cfg dispatch.Config, order []replayTask, started map[string]time.Time) (replayed, error) {
	ledger, err := dispatch.NewLedger(cfg)
	if err != nil {
		return replayed{}, err
	}
	r := replayed{ledger: ledger, kicks: map[string]dispatch.Kick{}, speedAt: map[string]time.Time{}}
	rejoin := func(until time.Time, end bool) {
		for _, id := range slices.Sorted(maps.Keys(r.kicks)) {
			s := started[id]
			if s.After(r.kicks[id].At) && (end || s.Before(until)) {
				ledger.Rejoin(id)
				delete(r.kicks, id)
				delete(r.speedAt, id)
			}
		}
	}
	for _, t := range order {
		rejoin(t.at, false)
		for _, o := range t.tasks {
			r.tasks++
			ks, err := ledger.Record(o)
			if err != nil {
				continue // not derivable from the records; skipped by every node alike
			}
			if o.Scored() {
				for _, id := range o.Assigned {
					r.speedAt[id] = t.at
				}
			}
			for _, k := range ks {
				k.At = t.at
				r.kicks[k.Node] = k
			}
		}
	}
	rejoin(time.Time{}, true)
	return r, nil
}
