package processor

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// How a replicated job's rooms work. A MacroJob room of a job with R > 1
// queues R items per MicroJob, "<micro-id>#<r>" for r = 0..R-1, all the
// #0 items first. An item is a token for one run: the member the queue
// hands it runs that MicroJob if it has not run it yet and fewer than R
// processors have committed to it, and otherwise another MicroJob of the
// MacroJob that it has not run and that still lacks committers; then it
// completes the item. A member with nothing left to run in a MacroJob
// does not ask its room for work (roomCommitted), so it holds no token it
// cannot use; a token it holds anyway (a race with the store) is left to
// expire and is handed to another member. A room re-created after all
// members left completes, per MicroJob, as many tokens as the store shows
// committers.

// replicaItem is the queue item of replica r of MicroJob id.
func replicaItem(id jobs.ID, r int) macrojob.ID {
	return macrojob.ID(id.String() + "#" + strconv.Itoa(r))
}

// parseReplicaItem splits a queue item of a replicated job.
func parseReplicaItem(item macrojob.ID) (jobs.ID, int, error) {
	id, rs, ok := strings.Cut(string(item), "#")
	if !ok {
		return jobs.ID{}, 0, fmt.Errorf("%w: queue item %q has no replica", records.ErrBadRecord, item)
	}
	mid, err := jobs.ParseHash(id)
	if err != nil {
		return jobs.ID{}, 0, fmt.Errorf("%w: queue item %q: %w", records.ErrBadRecord, item, err)
	}
	r, err := strconv.Atoi(rs)
	if err != nil || r < 0 || r >= jobs.MaxReplicas || strconv.Itoa(r) != rs {
		return jobs.ID{}, 0, fmt.Errorf("%w: queue item %q: replica %q", records.ErrBadRecord, item, rs)
	}
	return mid, r, nil
}

// roomItems are the queue items of MacroJob m: its MicroJob IDs, or for a
// replicated job R items per MicroJob, replica by replica.
func roomItems(js *jobState, m *jobs.MacroJob) []macrojob.ID {
	r := max(int(js.info.Requirements.Replicas), 1)
	items := make([]macrojob.ID, 0, r*len(m.Micros))
	if r == 1 {
		for _, mu := range m.Micros {
			if !outOfRoom(js, &mu) {
				items = append(items, macrojob.ID(mu.ID.String()))
			}
		}
		return items
	}
	for k := range r {
		for _, mu := range m.Micros {
			items = append(items, replicaItem(mu.ID, k))
		}
	}
	return items
}

// progressOf is js's progress (finish.Progress), counting its replicas.
func (w *Worker) progressOf(ctx context.Context, js *jobState) (finish.Progress, error) {
	return w.index.Progress(ctx, js.plan.JobID, int(js.info.Requirements.Replicas))
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
	now := time.Now()
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

// completeReplicas completes, in a room this processor (re)creates, as
// many tokens of each MicroJob as the store shows committers (at most R).
func (w *Worker) completeReplicas(ctx context.Context, js *jobState, m *jobs.MacroJob, room *macrojob.Room, creator macrojob.PeerID) {
	if !replicated(js) || creator != macrojob.PeerID(w.self) {
		return
	}
	p, err := w.progressOf(ctx, js)
	if err != nil {
		return
	}
	r := int(js.info.Requirements.Replicas)
	for _, mu := range m.Micros {
		for k := range min(len(p.CommittedBy(mu.ID)), r) {
			_ = room.Complete(ctx, replicaItem(mu.ID, k))
		}
	}
}

// replicaTarget chooses the MicroJob this processor runs for a token of
// MicroJob mid: mid itself if it has not run it and it lacks committers,
// else the first such MicroJob of the MacroJob, starting at a place drawn
// from this processor's ID (so that members do not all pick the same
// one). taken are MicroJobs already run in this turn. False when there is
// none.
func (w *Worker) replicaTarget(ctx context.Context, js *jobState, mid jobs.ID, taken map[jobs.ID]bool) (*jobs.MicroJob, bool) {
	micro, err := js.plan.MicroJob(mid)
	if err != nil {
		return nil, false
	}
	skip, err := w.roomCommitted(ctx, js)
	if err != nil {
		return nil, false
	}
	for id := range taken {
		skip[id] = true
	}
	if !skip[mid] {
		return micro, true
	}
	micros := js.plan.Macros[micro.Macro].Micros
	h := records.RankHash(w.self, js.plan.JobID.String(), strconv.FormatUint(micro.Macro, 10))
	start := int(binary.BigEndian.Uint32(h[:4]) % uint32(len(micros)))
	for k := range micros {
		if mu := &micros[(start+k)%len(micros)]; !skip[mu.ID] {
			return mu, true
		}
	}
	return nil, false
}

// processReplicas runs the tokens of one ownership turn of a replicated
// job's room (see the top of this file): a MicroJob for each token,
// distinct from one another, their commitments written as one store batch,
// then the tokens completed. A token with nothing left to run is left
// locked: it expires and another member takes it.
func (w *Worker) processReplicas(ctx context.Context, js *jobState, room *macrojob.Room, items []macrojob.ID) {
	var done []macrojob.ID
	var ran []microjob.Disclosure
	var commits []crdt.Entry
	taken := map[jobs.ID]bool{}
	for _, item := range items {
		mid, _, err := parseReplicaItem(item)
		if err != nil {
			continue
		}
		micro, ok := w.replicaTarget(ctx, js, mid, taken)
		if !ok {
			w.log.Debug("holding a replica token with nothing to run", "job", js.plan.JobID, "item", item)
			continue
		}
		if w.cfg.Hold != nil {
			w.cfg.Hold(ctx, micro.ID)
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
	w.finishTurn(ctx, js, room, ran, commits, done)
}

// groupSilent keeps, of the MicroJobs redoSilent would have redone
// because their committers never disclosed, those of MacroJobs whose
// commitment round is over (Progress.MacroFull): in a replicated job a
// MacroJob discloses only once every MicroJob has R committers, and its
// first committers are not silent before that.
func (w *Worker) groupSilent(ctx context.Context, js *jobState, silent map[string][]string) map[string][]string {
	if !replicated(js) || len(silent) == 0 {
		return silent
	}
	p, err := w.progressOf(ctx, js)
	if err != nil {
		return nil
	}
	out := map[string][]string{}
	for m, ps := range silent {
		id, err := jobs.ParseHash(m)
		if err != nil {
			continue
		}
		mu, err := js.plan.MicroJob(id)
		if err != nil || !p.MacroFull(&js.plan.Macros[mu.Macro], nil) {
			continue
		}
		out[m] = ps
	}
	return out
}
