package jobstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// Router is the store the node's components use: it has the mesh store's
// methods and sends each key to where its level says (records.KeyLevel):
// mesh-level keys to the mesh store, a job's job-level keys to that job's
// store. A write of a job-level key opens the job's store (the node takes
// part in the job); a read of a job this node holds no store of sees only
// the mesh-level records, as a bystander should.
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
	return s.Get(ctx, key)
}

// prefixJob returns the job a query prefix is inside of (ok false: a
// prefix wider than one job's records, or outside /jobs).
func prefixJob(prefix string) (jobs.ID, bool) {
	id, ok := records.JobOf(strings.TrimSuffix(prefix, "/") + "/")
	if !ok {
		return jobs.ID{}, false
	}
	// "/jobs/<id>" and anything below it.
	return id, len(strings.TrimSuffix(prefix, "/")) >= len(records.JobKey(id))
}

// Query returns the records under prefix in key order: the mesh store's,
// and for a prefix inside one job, that job's store's too.
func (r *Router) Query(ctx context.Context, prefix string) ([]crdt.Record, error) {
	return r.QueryKeys(ctx, prefix, nil)
}

// QueryKeys is Query with the records whose key keep refuses left out
// before they are read (nil keeps every one).
func (r *Router) QueryKeys(ctx context.Context, prefix string, keep func(key string) bool) ([]crdt.Record, error) {
	mesh, err := r.mesh.QueryKeys(ctx, prefix, keep)
	if err != nil {
		return nil, err
	}
	id, inJob := prefixJob(prefix)
	if !inJob {
		return mesh, nil
	}
	s, ok := r.jobs.Get(id)
	if !ok {
		return mesh, nil
	}
	own, err := s.QueryKeys(ctx, prefix, keep)
	if err != nil {
		return nil, err
	}
	out := append(mesh, own...)
	slices.SortStableFunc(out, func(a, b crdt.Record) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// Watch follows the changes under prefix: the mesh store's, and for a
// prefix inside one job whose store this node holds, that store's too.
// A job store opened after Watch is not followed.
func (r *Router) Watch(ctx context.Context, prefix string) <-chan crdt.Change {
	mesh := r.mesh.Watch(ctx, prefix)
	id, inJob := prefixJob(prefix)
	if !inJob {
		return mesh
	}
	s, ok := r.jobs.Get(id)
	if !ok {
		return mesh
	}
	own := s.Watch(ctx, prefix)
	out := make(chan crdt.Change)
	go func() {
		defer close(out)
		for mesh != nil || own != nil {
			var c crdt.Change
			var ok bool
			select {
			case c, ok = <-mesh:
				if !ok {
					mesh = nil
					continue
				}
			case c, ok = <-own:
				if !ok {
					own = nil
					continue
				}
			}
			select {
			case out <- c:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

var (
	_ crdt.Reader = (*Router)(nil)
	_ crdt.Writer = (*Router)(nil)
)
