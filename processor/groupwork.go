package processor

import (
	"context"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/groupjob"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// A replicated job's group and the tokens of its rooms are package
// groupjob's; the worker asks it whether it may work on the job and what
// to run for a token, and runs the MicroJobs here.

// replicated reports whether js asks for R > 1 processors per MicroJob.
func replicated(js *jobState) bool { return groupjob.Replicated(js.info) }

// roomItems are the queue items of MacroJob m: its MicroJob IDs but the
// verifier's (run outside the room), or for a replicated job R items per
// MicroJob (groupjob.RoomItems).
func roomItems(js *jobState, m *jobs.MacroJob) []macrojob.ID {
	if replicated(js) {
		return groupjob.RoomItems(m, int(js.info.Requirements.Replicas))
	}
	items := make([]macrojob.ID, 0, len(m.Micros))
	for _, mu := range m.Micros {
		if !outOfRoom(js, &mu) {
			items = append(items, macrojob.ID(mu.ID.String()))
		}
	}
	return items
}

// progressOf is js's progress (finish.Progress), counting its replicas.
func (w *Worker) progressOf(ctx context.Context, js *jobState) (finish.Progress, error) {
	return w.index.Progress(ctx, js.plan().JobID, int(js.info.Requirements.Replicas))
}

// roomCommitted returns the MicroJobs of a job this processor has no
// reason to run: those whose commitment round is over and those it
// committed itself (finish.Progress.Unneeded); for a replicated job those it
// ran too, and for a job of one replica those heard complete from a live
// processor (heardDone). A MacroJob all of whose MicroJobs are in it has
// nothing for this processor. Callers must not modify the map.
func (w *Worker) roomCommitted(ctx context.Context, js *jobState) (map[jobs.ID]bool, error) {
	if replicated(js) {
		p, err := w.progressOf(ctx, js)
		if err != nil {
			return nil, err
		}
		out := p.Unneeded(w.self)
		w.mu.Lock()
		for id := range js.mine {
			out[id] = true
		}
		w.mu.Unlock()
		return out, nil
	}
	// Derived at most once a Poll: a worker looks for a room on every
	// step, and a map a Poll old only makes it look at a room whose
	// MicroJobs process() then finds done.
	now := w.now()
	w.mu.Lock()
	if js.doneMap != nil && now.Sub(js.doneAt) < w.cfg.Poll {
		out := js.doneMap
		w.mu.Unlock()
		return out, nil
	}
	w.mu.Unlock()
	p, err := w.progressOf(ctx, js)
	if err != nil {
		return nil, err
	}
	out := p.Unneeded(w.self)
	for mid := range w.heardDone(js) {
		out[mid] = true
	}
	w.mu.Lock()
	js.doneMap, js.doneAt = out, now
	w.mu.Unlock()
	return out, nil
}

// processReplicas runs the tokens of one ownership turn of a replicated
// job's room: a MicroJob for each token (groupjob.Groups.Target chooses
// which), distinct from one another, their commitments written as one
// store batch, then the tokens completed. A token with nothing left to run is left
// locked: it expires and another member takes it.
func (w *Worker) processReplicas(ctx context.Context, js *jobState, room *macrojob.Room, items []macrojob.ID, took *turnTook) {
	var done []macrojob.ID
	var ran []microjob.Disclosure
	var commits []crdt.Entry
	taken := map[jobs.ID]bool{}
	for _, item := range items {
		mid, _, err := groupjob.ParseReplicaItem(item)
		if err != nil {
			continue
		}
		micro, ok := (*jobs.MicroJob)(nil), false
		if skip, err := w.roomCommitted(ctx, js); err == nil {
			micro, ok = w.groups.Target(js.plan(), mid, skip, taken)
		}
		if !ok {
			w.log.Debug("holding a replica token with nothing to run", "job", js.plan().JobID, "item", item)
			continue
		}
		took.add(micro.Macro)
		if w.cfg.Hold != nil {
			w.cfg.Hold(ctx, js.plan().JobID, micro.ID)
			if ctx.Err() != nil {
				return
			}
		}
		d, c, err := w.run(ctx, js, micro)
		if err != nil {
			w.fail(js, "running MicroJob", err)
			continue
		}
		taken[micro.ID] = true
		ran = append(ran, d)
		commits = append(commits, crdt.Entry{Key: records.CommitmentKey(c), Type: records.CommitType, Payload: c.Encode()})
		done = append(done, item)
	}
	if len(commits) == 0 {
		return
	}
	w.finishTurn(ctx, js, room, turnResult{ran: ran, commits: commits, done: done, took: took})
}
