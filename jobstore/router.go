package jobstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ipfs/go-cid"
	"github.com/ipfs/go-datastore"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// Router is the store the node's components use: it has the mesh store's
// methods (crdt.Replicated) and sends each key to where its level says
// (records.KeyLevel): mesh-level keys to the mesh store, a job's
// job-level keys to that job's store. A write of a job-level key opens the
// job's store (the node takes part in the job); a read of a job this node
// holds no store of sees only the mesh-level records, as a bystander
// should. Query and Watch of a prefix read every store whose records lie
// under it (see scopeOf), a watch including the stores opened after it.
type Router struct {
	mesh *crdt.Store
	jobs *Manager
}

// NewRouter returns a Router over the mesh store and m's job stores.
func NewRouter(mesh *crdt.Store, m *Manager) *Router { return &Router{mesh: mesh, jobs: m} }

// jobOf returns the job whose store holds key (ok false: the mesh's).
func jobOf(key string) (jobs.ID, bool, error) {
	l, id, err := records.KeyLevel(key)
	if err != nil {
		return jobs.ID{}, false, err
	}
	return id, l == records.JobLevel, nil
}

// writerFor returns the store that key is written to, opening its job's.
func (r *Router) writerFor(ctx context.Context, key string) (*crdt.Store, error) {
	id, job, err := jobOf(key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", crdt.ErrPolicy, err)
	}
	if !job {
		return r.mesh, nil
	}
	if r.jobs.cfg.Rooms {
		if _, macro, ok := records.RoomOf(key); ok {
			return r.jobs.OpenRoom(ctx, id, macro)
		}
	}
	return r.jobs.Open(ctx, id)
}

// Put writes one record to the store its key belongs in.
func (r *Router) Put(ctx context.Context, key, recordType string, payload []byte) error {
	s, err := r.writerFor(ctx, key)
	if err != nil {
		return err
	}
	return s.Put(ctx, key, recordType, payload)
}

// Delete writes a tombstone to the store key belongs in.
func (r *Router) Delete(ctx context.Context, key string) error {
	s, err := r.writerFor(ctx, key)
	if err != nil {
		return err
	}
	return s.Delete(ctx, key)
}

// PutBatch writes entries, one batch per store they belong in; every
// entry is checked before anything is written.
func (r *Router) PutBatch(ctx context.Context, entries []crdt.Entry) error {
	var order []*crdt.Store
	groups := map[*crdt.Store][]crdt.Entry{}
	for _, e := range entries {
		s, err := r.writerFor(ctx, e.Key)
		if err != nil {
			return err
		}
		if _, ok := groups[s]; !ok {
			order = append(order, s)
		}
		groups[s] = append(groups[s], e)
	}
	for _, s := range order {
		if err := s.PutBatch(ctx, groups[s]); err != nil {
			return err
		}
	}
	return nil
}

// Get reads key from the store it belongs in: ErrNotFound for a job-level
// key of a job this node holds no store of.
func (r *Router) Get(ctx context.Context, key string) (crdt.Record, error) {
	id, job, err := jobOf(key)
	if err != nil || !job {
		return r.mesh.Get(ctx, key)
	}
	s, ok := r.jobs.Get(id)
	if !ok {
		return crdt.Record{}, fmt.Errorf("%w: %q (this node holds no store of job %s)", crdt.ErrNotFound, key, id)
	}
	rec, err := s.Get(ctx, key)
	if _, macro, ok := records.RoomOf(key); ok {
		if room, held := r.jobs.Room(id, macro); held {
			// The room's record, or the copy carried to the job store,
			// whichever is newer.
			if own, rerr := room.Get(ctx, key); rerr == nil && (err != nil || own.Seq > rec.Seq) {
				return own, nil
			}
		}
	}
	return rec, err
}

// scope is which job stores hold records under a prefix: every one
// (all), job's (one), or none (a prefix outside every job's records).
type scope struct {
	all, one bool
	job      jobs.ID
}

// scopeOf returns the scope of prefix, read with the stores' path
// semantics: "/", "/jobs" and "/jobs/" cover every job; "/jobs/<id>"
// and anything under it, job id.
func scopeOf(prefix string) scope {
	p := datastore.NewKey(prefix).String()
	if p == "/" || p == records.JobsPrefix {
		return scope{all: true}
	}
	id, ok := records.JobOf(p)
	return scope{one: ok, job: id}
}

// covers reports whether job id's store holds records of the scope.
func (sc scope) covers(id jobs.ID) bool { return sc.all || sc.one && sc.job == id }

// jobStores returns the open job stores that hold records of sc.
func (r *Router) jobStores(sc scope) []*crdt.Store {
	switch {
	case sc.all:
		return r.jobs.stores()
	case sc.one:
		return r.jobs.storesOf(sc.job)
	}
	return nil
}

// Query returns the records under prefix in key order: the mesh store's
// and those of every job store this node holds open whose records lie
// under prefix (every one for "/" or "/jobs", one job's for a prefix
// inside that job).
func (r *Router) Query(ctx context.Context, prefix string) ([]crdt.Record, error) {
	return r.QueryKeys(ctx, prefix, nil)
}

// QueryKeys is Query with the records whose key keep refuses left out
// before they are read (nil keeps every one).
func (r *Router) QueryKeys(ctx context.Context, prefix string, keep func(key string) bool) ([]crdt.Record, error) {
	out, err := r.mesh.QueryKeys(ctx, prefix, keep)
	if err != nil {
		return nil, err
	}
	stores := r.jobStores(scopeOf(prefix))
	for _, s := range stores {
		own, err := s.QueryKeys(ctx, prefix, keep)
		if errors.Is(err, crdt.ErrClosed) {
			continue // dropped meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, own...)
	}
	if len(stores) > 0 {
		slices.SortStableFunc(out, func(a, b crdt.Record) int { return strings.Compare(a.Key, b.Key) })
		out = newestOfEach(out)
	}
	return out, nil
}

// newestOfEach keeps, of the records sorted by key, the one with the
// highest Seq of each key: a room record read from its room store and as
// carried to the job store is one record.
func newestOfEach(sorted []crdt.Record) []crdt.Record {
	out := sorted[:0]
	for _, rec := range sorted {
		if n := len(out); n > 0 && out[n-1].Key == rec.Key {
			if rec.Seq > out[n-1].Seq {
				out[n-1] = rec
			}
			continue
		}
		out = append(out, rec)
	}
	return out
}

// Self returns the peer ID that signs this node's writes: the mesh
// store's (every job store signs with the same key).
func (r *Router) Self() peer.ID { return r.mesh.Self() }

// RepairSoon asks the mesh store and every open job store for a repair
// (see crdt.Store.RepairSoon); it never blocks.
func (r *Router) RepairSoon() {
	r.mesh.RepairSoon()
	for _, s := range r.jobs.stores() {
		s.RepairSoon()
	}
}

// Merged returns the DAG blocks of the mesh store and of every open job
// store: the blocks the block GC must keep.
func (r *Router) Merged(ctx context.Context) ([]cid.Cid, error) {
	mesh, err := r.mesh.Merged(ctx)
	if err != nil {
		return nil, err
	}
	own, err := r.jobs.Merged(ctx)
	if err != nil {
		return nil, err
	}
	return append(mesh, own...), nil
}

var _ crdt.Replicated = (*Router)(nil)
