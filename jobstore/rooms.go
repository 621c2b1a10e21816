package jobstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// Room stores. With Config.Rooms, the records of one MacroJob's room
// (records.RoomOf) are written to a store of that MacroJob's own, beside
// the job's store: its members open it as they join the room, and
// whoever else writes such a record (a verifier's runner, a redo) opens
// it by writing. The rest of the job's nodes receive those records in
// the MacroJob's aggregates (records.CommittedKey, records.DisclosedKey),
// which carry them as their authors signed them (crdt.Carriage). A room
// store lives and dies with its job's store: it is reopened on restart
// (the manifest lists it) and dropped with it.

// RoomNamespace is where MacroJob macro's room store of job id keeps its
// state: under the job store's namespace, so that dropping the job
// deletes it.
func RoomNamespace(id jobs.ID, macro uint64) string {
	return Namespace(id) + "/room/" + strconv.FormatUint(macro, 10)
}

// RoomTopic is the pubsub topic of MacroJob macro's room store of job id.
func RoomTopic(id jobs.ID, macro uint64) string {
	return "/jobmesh/2/job/" + id.String() + "/macro/" + strconv.FormatUint(macro, 10) + "/crdt"
}

// RoomPolicy is MacroJob macro's room store's author rule: only room
// records of that MacroJob of job id (ErrForeignRecord otherwise), each
// by an author base allows.
func RoomPolicy(id jobs.ID, macro uint64, base crdt.AuthorPolicy) crdt.AuthorPolicy {
	return func(key string, author peer.ID) error {
		job, m, ok := records.RoomOf(key)
		if !ok || job != id || m != macro {
			return fmt.Errorf("%w: %q in the store of MacroJob %d of job %s", ErrForeignRecord, key, macro, id)
		}
		if base == nil {
			return nil
		}
		return base(key, author)
	}
}

// OpenRoom returns MacroJob macro's room store of job id, opening it (and
// the job's store) if this node does not hold it yet.
func (m *Manager) OpenRoom(ctx context.Context, id jobs.ID, macro uint64) (*crdt.Store, error) {
	if _, err := m.Open(ctx, id); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	if _, ok := m.open[id]; !ok {
		return nil, fmt.Errorf("%w: job %s", ErrDropped, id) // dropped meanwhile
	}
	if s := m.rooms[id][macro]; s != nil {
		return s, nil
	}
	mf := m.meta[id]
	if !slices.Contains(mf.Rooms, macro) {
		mf.Rooms = append(slices.Clone(mf.Rooms), macro)
		if err := m.putManifest(ctx, id, mf); err != nil {
			return nil, err
		}
		m.meta[id] = mf
	}
	cfg := m.cfg.Store
	cfg.Namespace, cfg.Topic = RoomNamespace(id, macro), RoomTopic(id, macro)
	cfg.AuthorPolicy = m.refused.counting(id, RoomPolicy(id, macro, m.cfg.Store.AuthorPolicy))
	cfg.Registerer = nil
	cfg.Logger = m.cfg.Store.Logger.With("job", id, "macro", macro)
	s, err := crdt.New(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("jobstore: opening the room store of MacroJob %d of job %s: %w", macro, id, err)
	}
	if m.rooms[id] == nil {
		m.rooms[id] = map[uint64]*crdt.Store{}
	}
	m.rooms[id][macro] = s
	for f := range m.followers {
		f.fn(id, s)
	}
	return s, nil
}

// Room returns MacroJob macro's room store of job id if this node holds
// it open.
func (m *Manager) Room(id jobs.ID, macro uint64) (*crdt.Store, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.rooms[id][macro]
	return s, ok
}

// RoomsOf returns the MacroJobs of job id whose room stores this node
// holds open, in order.
func (m *Manager) RoomsOf(id jobs.ID) []uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.rooms[id]))
}

// JoinRoom opens MacroJob macro's room store of job id, with room stores
// on (Config.Rooms; else it does nothing): a member joining the room
// reads the other members' records from then on. A job whose store was
// dropped is not joined again.
func (r *Router) JoinRoom(ctx context.Context, id jobs.ID, macro uint64) error {
	if !r.jobs.cfg.Rooms {
		return nil
	}
	_, err := r.jobs.OpenRoom(ctx, id, macro)
	if errors.Is(err, ErrDropped) {
		return nil
	}
	return err
}

// Rooms is the Manager's room stores: nil without them (Config.Rooms).
func (r *Router) Rooms() *Manager {
	if !r.jobs.cfg.Rooms {
		return nil
	}
	return r.jobs
}
