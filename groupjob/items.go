package groupjob

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
	"github.com/jobmesh/jobmesh/records"
)

// Replicated reports whether a job asks for R > 1 processors per
// MicroJob.
func Replicated(info *jobs.JobInfo) bool { return info.Requirements.Replicas > 1 }

// ReplicaItem is the queue item of replica r of MicroJob id.
func ReplicaItem(id jobs.ID, r int) macrojob.ID {
	return macrojob.ID(id.String() + "#" + strconv.Itoa(r))
}

// ParseReplicaItem splits a queue item of a replicated job. Items come
// from the room's queue, which any member writes: an item that does not
// read back as ReplicaItem wrote it is records.ErrBadRecord.
func ParseReplicaItem(item macrojob.ID) (jobs.ID, int, error) {
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

// RoomItems are the queue items of MacroJob m of a job of replicas
// processors per MicroJob: replicas items per MicroJob, replica by
// replica (every MicroJob's #0 first).
func RoomItems(m *jobs.MacroJob, replicas int) []macrojob.ID {
	items := make([]macrojob.ID, 0, replicas*len(m.Micros))
	for k := range replicas {
		for _, mu := range m.Micros {
			items = append(items, ReplicaItem(mu.ID, k))
		}
	}
	return items
}

// Completer completes a queue item (a macrojob.Room).
type Completer interface {
	Complete(ctx context.Context, id macrojob.ID) error
}

// CompleteReplicas completes, in a room of MacroJob m that this processor
// (re)creates (creator is itself), as many tokens of each MicroJob as the
// store shows committers, at most R. It does nothing for a job with R = 1
// or a room another processor created.
func (g *Groups) CompleteReplicas(ctx context.Context, info *jobs.JobInfo, plan *jobs.Plan, m *jobs.MacroJob, room Completer, creator macrojob.PeerID) {
	if !Replicated(info) || creator != macrojob.PeerID(g.self) {
		return
	}
	p, err := g.progressOf(ctx, info, plan)
	if err != nil {
		return
	}
	r := int(info.Requirements.Replicas)
	for _, mu := range m.Micros {
		for k := range min(len(p.CommittedBy(mu.ID)), r) {
			_ = room.Complete(ctx, ReplicaItem(mu.ID, k))
		}
	}
}

// Target chooses the MicroJob this processor runs for a token of MicroJob
// mid of plan: mid itself if it is in neither done (the MicroJobs it has
// no reason to run) nor taken (those run in this turn already), else the
// first such MicroJob of the MacroJob, starting at a place drawn from this
// processor's ID (so that members do not all pick the same one). False
// when there is none.
func (g *Groups) Target(plan *jobs.Plan, mid jobs.ID, done, taken map[jobs.ID]bool) (*jobs.MicroJob, bool) {
	micro, err := plan.MicroJob(mid)
	if err != nil {
		return nil, false
	}
	skip := func(id jobs.ID) bool { return done[id] || taken[id] }
	if !skip(mid) {
		return micro, true
	}
	micros := plan.Macros[micro.Macro].Micros
	h := records.RankHash(g.self, plan.JobID.String(), strconv.FormatUint(micro.Macro, 10))
	start := int(binary.BigEndian.Uint32(h[:4]) % uint32(len(micros)))
	for k := range micros {
		if mu := &micros[(start+k)%len(micros)]; !skip(mu.ID) {
			return mu, true
		}
	}
	return nil, false
}
