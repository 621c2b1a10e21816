package jobstore

import (
	"context"
	"maps"
	"slices"

	"github.com/ipfs/go-cid"
	"github.com/ipfs/go-datastore/query"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/jobs"
)

// Join opens job id's store if this node does not hold it yet: the node
// takes part in the job (a processor that could serve it, its creator's
// node) and from then on reads and writes its job-level records.
func (r *Router) Join(ctx context.Context, id jobs.ID) error {
	_, err := r.jobs.Open(ctx, id)
	return err
}

// Held returns the jobs whose stores this node holds open, in ID order.
func (m *Manager) Held() []jobs.ID {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := slices.Collect(maps.Keys(m.open))
	slices.SortFunc(ids, byID)
	return ids
}

// Self is the peer whose key signs this node's records.
func (r *Router) Self() peer.ID { return r.mesh.Self() }

// RepairSoon asks the mesh store and every open job store for a repair.
func (r *Router) RepairSoon() {
	r.mesh.RepairSoon()
	for _, id := range r.jobs.Held() {
		if s, ok := r.jobs.Get(id); ok {
			s.RepairSoon()
		}
	}
}

// Merged lists the DAG blocks of every delta the mesh store and the open
// job stores merged.
func (r *Router) Merged(ctx context.Context) ([]cid.Cid, error) {
	cs, err := r.mesh.Merged(ctx)
	if err != nil {
		return nil, err
	}
	own, err := r.jobs.Merged(ctx)
	return append(cs, own...), err
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
