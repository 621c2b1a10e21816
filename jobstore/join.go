package jobstore

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/ipfs/go-datastore/query"

	"github.com/jobmesh/jobmesh/jobs"
)

// Join opens job id's store if this node does not hold it yet: the node
// takes part in the job (a processor that could serve it, its creator's
// node) and from then on reads and writes its job-level records. A job
// whose store this node dropped after its retention is not joined again
// (nil: there is nothing left to take part in).
func (r *Router) Join(ctx context.Context, id jobs.ID) error {
	_, err := r.jobs.Open(ctx, id)
	if errors.Is(err, ErrDropped) {
		return nil
	}
	return err
}

// Holds reports whether this node holds job id's store open.
func (r *Router) Holds(id jobs.ID) bool { return r.jobs.Holds(id) }

// Held returns the jobs whose stores this node holds open, in ID order.
func (m *Manager) Held() []jobs.ID {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := slices.Collect(maps.Keys(m.open))
	slices.SortFunc(ids, byID)
	return ids
}

// Holds reports whether this node holds job id's store open.
func (m *Manager) Holds(id jobs.ID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.open[id]
	return ok
}

// Times returns when job id's store was opened and when its job ended
// (zero while it runs); false for a job whose store this node does not
// hold open.
func (m *Manager) Times(id jobs.ID) (opened, ended time.Time, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, held := m.open[id]; !held {
		return time.Time{}, time.Time{}, false
	}
	mf := m.meta[id]
	return mf.Opened, mf.Ended, true
}

// Stored counts the datastore keys job id's store keeps (0 once it is
// dropped, or for a job this node never held).
func (m *Manager) Stored(ctx context.Context, id jobs.ID) (int, error) {
	res, err := m.cfg.Store.Datastore.Query(ctx, query.Query{Prefix: Namespace(id), KeysOnly: true})
	if err != nil {
		return 0, err
	}
	all, err := res.Rest()
	return len(all), err
}
