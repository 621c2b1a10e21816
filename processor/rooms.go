package processor

import (
	"context"
	"encoding/binary"
	"slices"
	"time"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
	"github.com/jobmesh/jobmesh/meshview"
	"github.com/jobmesh/jobmesh/records"
)

// Which room a processor works in: the rooms it is in, those open to join,
// and the open MacroJobs it claims or opens by its rank
// (macrojob.DecideOpen).

// room returns a room of js with work for this node: one it is in, an
// active room it joins, or an open MacroJob it takes (seed 004: join an
// open MacroJob if there is one, else take one). Nil means no MacroJob of
// the job has work left that this node may take now (a room is joined
// only by the processors ranked before its MicroJobs left).
func (w *Worker) room(ctx context.Context, js *jobState) (*macrojob.Room, error) {
	plan := js.plan()
	id := plan.JobID.String()
	committed, err := w.roomCommitted(ctx, js)
	if err != nil {
		return nil, err
	}
	w.jobChannel(ctx, js)
	now := w.now()
	macros := plan.Macros
	// MacroJobs this processor is to open come first (firstOwner); then
	// each processor starts looking at its own MacroJob, so that
	// processors spread over the rooms.
	owners := w.firstOwners(js)
	ranked, ranks := w.rankedAt(js, now)
	w.mu.Lock()
	openRank := js.openRank
	w.mu.Unlock()
	rank := func(i int) int {
		if i < len(openRank) {
			return openRank[i]
		}
		return 1 // no ranks (a view without this processor)
	}
	h := records.RankHash(w.self, id)
	start := int(binary.BigEndian.Uint32(h[:4]) % uint32(len(macros)))
	order := make([]int, 0, len(macros))
	for k := range macros {
		if i := (start + k) % len(macros); owners[i] == w.self {
			order = append(order, i)
		}
	}
	for k := range macros {
		if i := (start + k) % len(macros); owners[i] != w.self {
			order = append(order, i)
		}
	}
	for _, i := range order {
		m := &macros[i]
		if roomDone(js, m, committed) {
			continue
		}
		name := macrojob.RoomName(id, m.Index)
		w.mu.Lock()
		r := w.rooms[name]
		left, recently := w.doneRooms[name]
		w.mu.Unlock()
		if r == nil && recently && now.Sub(left) < w.lockTTL() {
			continue
		}
		if r != nil {
			if !r.Done() {
				return r, nil
			}
			continue
		}
		// A room not in use: whether to join, wait, claim or open it
		// follows from the ranks (macrojob.DecideOpen).
		in := w.openInput(ctx, js, m.Index, now)
		in.Ranked, in.RankedAt = ranks, ranked
		in.FirstOwner, in.Rank = owners[i] == w.self, rank(i)
		in.Left = roomLeft(js, m, committed)
		in.LeftSince, in.Patience = w.leftSince(js, m.Index, in.Left, now), w.processingTimeout()
		switch d := macrojob.DecideOpen(in); d.Action {
		case macrojob.OpenJoin:
			return w.join(ctx, js, m, macrojob.PeerID(d.Owner), committed)
		case macrojob.OpenNow:
			return w.join(ctx, js, m, macrojob.PeerID(w.self), committed)
		case macrojob.OpenClaim:
			return w.openRoom(ctx, js, m, in, d.Until.Sub(in.Now), committed)
		}
	}
	return nil, nil
}

// firstOwners names, for each MacroJob of a job, who opens its room: of
// the live processors eligible for the job (the dispatch view), by
// rendezvous hashing spread so that no processor is named for more than
// its share (macrojob.FirstOwners). When some of them that are not kicked out
// hold all the job's models on disk, only those holders are named. Every
// processor computes the same names from the store, so when a job appears
// and all processors look at once, one opens each room and the others
// join it (they see its lock or its announcement within the head start),
// instead of each opening its own queue for the same MicroJobs and running
// them twice. The names are kept with the job until the dispatch view
// changes.
func (w *Worker) firstOwners(js *jobState) []string {
	v := w.dview.Load()
	w.mu.Lock()
	if js.owners != nil && js.ownersView == v {
		owners := js.owners
		w.mu.Unlock()
		return owners
	}
	w.mu.Unlock()
	if _, ok := v.Processor(w.self); !ok {
		// A view without this processor is too young to agree with the
		// others' (its advertisement has not come back yet): name no
		// first owner, so everyone waits the head start, rather than
		// every processor naming itself and all opening the same rooms.
		w.refreshSoon()
		return make([]string, len(js.plan().Macros))
	}
	procs := []string{w.self}
	var holders []string
	if v != nil {
		r := js.info.Requirements
		job := dispatch.Job{Models: r.ModelCIDs}
		for _, p := range v.Processors {
			if (r.GPUModel == "" || r.GPUModel == p.CardModel) && p.VRAM >= r.MinVRAMMiB {
				if p.ID != w.self {
					procs = append(procs, p.ID)
				}
				if len(r.ModelCIDs) > 0 && p.Kick == nil && dispatch.HoldsModels(job, p.Node) {
					holders = append(holders, p.ID)
				}
			}
		}
	}
	eligible := len(procs)
	if len(holders) > 0 {
		// Model locality (seed 001): when eligible processors hold the
		// job's models, they open its rooms; the others join after the
		// head start. A kicked-out holder takes no work, so it is no
		// reason to narrow.
		procs = holders
	}
	plan := js.plan()
	id := plan.JobID.String()
	idxs := make([]uint64, len(plan.Macros))
	for i, m := range plan.Macros {
		idxs[i] = m.Index
	}
	owners := macrojob.FirstOwners(id, idxs, procs)
	openRank := make([]int, len(plan.Macros))
	narrowed := len(procs) < eligible
	for i, m := range plan.Macros {
		// This processor's place in the same order: after every named
		// holder when it holds not the models, else among them.
		if narrowed && !slices.Contains(procs, w.self) {
			openRank[i] = len(procs)
		} else {
			openRank[i] = macrojob.NewOrder(id, m.Index, owners[i]).Rank(w.self, procs)
		}
	}
	able := w.able(v, procs)
	w.mu.Lock()
	js.owners, js.openRank, js.ownersView, js.eligible = owners, openRank, v, eligible
	js.rankProcs, js.verifiers = able, nil // verifierRanks derives them again
	w.mu.Unlock()
	return owners
}

// openInput gathers what this processor knows at now of the room of
// MacroJob macro of js for macrojob.DecideOpen: its lock in the store, its
// announcement on the Job channel (the store may lag), and the claims on
// it heard there. The caller adds the ranks.
func (w *Worker) openInput(ctx context.Context, js *jobState, macro uint64, now time.Time) macrojob.OpenInput {
	in := macrojob.OpenInput{Now: now, HeadStart: w.headStart(js), Self: w.self}
	if lock, ok := records.ReadRoomLock(ctx, w.p.Store, js.plan().JobID.String(), macro); ok {
		in.Lock = &lock
	}
	if owner, ok := w.announcedOwner(js, macro, now); ok {
		in.Announced = owner
	}
	in.Claims = w.claimsOf(js, macro)
	return in
}

// claimsOf returns the claims on the room of MacroJob macro of js heard
// from processors other than this one, in the MacroJob's order
// (macrojob.Order), each marked when it comes before this processor.
func (w *Worker) claimsOf(js *jobState, macro uint64) []macrojob.RoomClaim {
	var out []macrojob.RoomClaim
	var owner string
	w.mu.Lock()
	for q, at := range js.claims[macro] {
		if q != w.self {
			out = append(out, macrojob.RoomClaim{Peer: q, At: at})
		}
	}
	if i := int(macro); i < len(js.owners) && js.plan().Macros[i].Index == macro {
		owner = js.owners[i]
	}
	w.mu.Unlock()
	if len(out) == 0 {
		return nil
	}
	macrojob.NewOrder(js.plan().JobID.String(), macro, owner).Claims(out, w.self)
	return out
}

// openRoom carries out a claim on the room of MacroJob m of js
// (macrojob.OpenClaim): it announces the claim on the Job channel (a room
// announcement with open = 0), pauses, and decides again, joining the room
// found or opening it.
func (w *Worker) openRoom(ctx context.Context, js *jobState, m *jobs.MacroJob, in macrojob.OpenInput, pause time.Duration, committed map[jobs.ID]bool) (*macrojob.Room, error) {
	since := w.now()
	if t := w.jobChannel(ctx, js); t != nil {
		_ = t.Publish(ctx, jobs.ChannelMsg{Kind: jobs.KindRoom, JobID: js.plan().JobID.String(), Macro: m.Index, Processor: w.self})
	}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
		again := w.openInput(ctx, js, m.Index, w.now())
		again.Ranked, again.RankedAt = in.Ranked, in.RankedAt
		again.FirstOwner, again.Rank, again.ClaimedAt = in.FirstOwner, in.Rank, since
		again.Left = in.Left
		switch d := macrojob.DecideOpen(again); d.Action {
		case macrojob.OpenJoin:
			return w.join(ctx, js, m, macrojob.PeerID(d.Owner), committed)
		case macrojob.OpenWait:
			pause = d.Until.Sub(again.Now)
		case macrojob.OpenSkip:
			return nil, nil
		default:
			return w.join(ctx, js, m, macrojob.PeerID(w.self), committed)
		}
	}
}

// roomLeft is how many MicroJobs of m's room have no commitment in
// committed, for macrojob.OpenInput.Left; 0 for a replicated job, whose
// room items are replicas.
func roomLeft(js *jobState, m *jobs.MacroJob, committed map[jobs.ID]bool) int {
	if replicated(js) {
		return 0
	}
	n := 0
	for _, mu := range m.Micros {
		if !committed[mu.ID] && !outOfRoom(js, &mu) {
			n++
		}
	}
	return n
}

// headStartPer is how many processors eligible for a job one HeadStart
// serves (headStart).
const headStartPer = 32

// headStart is how long the rooms of js are left to their first owners
// (macrojob.OpenInput.HeadStart): HeadStart for each headStartPer
// processors eligible for the job, begun. The first owners open their
// rooms all at once as the job's ranks come into use, and a processor
// that heard neither a room's lock nor its announcement when its head
// start ends claims the room, which its owner answers: with a hundred
// processors on one machine, a lock and an announcement took longer than
// one HeadStart, and nearly every claim came then.
func (w *Worker) headStart(js *jobState) time.Duration {
	w.mu.Lock()
	n := js.eligible
	w.mu.Unlock()
	return w.cfg.HeadStart * time.Duration(max(1, (n+headStartPer-1)/headStartPer))
}

// leftSince returns when this node first saw MacroJob macro of js with
// left MicroJobs without a commitment (macrojob.OpenInput.LeftSince).
func (w *Worker) leftSince(js *jobState, macro uint64, left int, now time.Time) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	if js.leftSeen == nil {
		js.leftSeen = make(map[uint64]leftSeen)
	}
	if s, ok := js.leftSeen[macro]; ok && s.left == left {
		return s.since
	}
	js.leftSeen[macro] = leftSeen{left, now}
	return now
}

// leftSeen is how many MicroJobs of a MacroJob were left without a
// commitment, and since when (Worker.leftSince).
type leftSeen struct {
	left  int
	since time.Time
}

// able is procs without the processors that cannot work now (canWork):
// ranked first, each would hold the verifier a processing timeout.
func (w *Worker) able(v *meshview.View, procs []string) []string {
	if v == nil {
		return procs
	}
	var out []string
	for _, p := range procs {
		if pv, ok := v.Processor(p); p == w.self || ok && w.canWork(pv) {
			out = append(out, p)
		}
	}
	return out
}

// canWork reports whether processor p of this node's view can work on a
// job now: not kicked out, with stake on a mesh with a chain (one slashed
// by an earlier job cannot join another), and connected to this node.
// This processor always can.
func (w *Worker) canWork(p meshview.ProcessorView) bool {
	switch {
	case p.ID == w.self:
		return true
	case p.Kick != nil, p.Stake != nil && p.Stake.Sign() == 0:
		return false
	}
	return w.p.Host == nil || w.connected(p.ID)
}
