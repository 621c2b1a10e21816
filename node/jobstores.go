package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/jobstore"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// openJobStores gives the node one replicated store per job beside the
// mesh's ([store] job_stores): the node's Store becomes a router that
// sends each record where its level says (records.KeyLevel), the stores
// an earlier run held are reopened (or dropped, past their retention),
// and a loop ends the stores of jobs that are over and drops them once
// [store] job_retention has passed. scfg is the mesh store's config, the
// template of every job store.
func (n *Node) openJobStores(ctx, runCtx context.Context, scfg crdt.Config) error {
	m, err := jobstore.New(jobstore.Config{
		Store: scfg, Blocks: n.IPFS.Blockstore(), Retention: time.Duration(n.Config.Store.JobRetention), Rooms: n.Config.Store.RoomStores,
		Registerer: n.Metrics,
	})
	if err != nil {
		return err
	}
	resumed, err := m.Resume(ctx)
	if err != nil {
		m.Close()
		return fmt.Errorf("node: reopening job stores: %w", err)
	}
	if len(resumed) > 0 {
		n.Log.Info("job stores reopened", "jobs", len(resumed))
	}
	n.jobStores = m
	n.router = jobstore.NewRouter(n.mesh, m)
	n.Store = n.router
	n.wg.Go(func() { n.keepJobStores(runCtx) })
	return nil
}

// rooms is the job stores as processor.RoomStores: nil (not a nil
// Manager in an interface) without room stores.
func (n *Node) rooms() processor.RoomStores {
	if n.jobStores == nil || !n.Config.Store.RoomStores {
		return nil
	}
	return n.jobStores
}

// JobStores is the node's per-job stores; nil without [store] job_stores.
func (n *Node) JobStores() *jobstore.Manager { return n.jobStores }

// joiner is the router as processor.Joiner and dapp.Joiner: nil (not a
// nil router in an interface) without job stores.
func (n *Node) joiner() interface {
	Join(ctx context.Context, id jobs.ID) error
	Holds(id jobs.ID) bool
} {
	if n.router == nil {
		return nil
	}
	return n.router
}

// merged lists every DAG block the node's stores have merged, for the
// block GC to keep.
func (n *Node) merged(ctx context.Context) ([]cid.Cid, error) { return n.Store.Merged(ctx) }

// jobStoreSweep bounds how often keepJobStores looks: a tenth of the
// retention, between a second and a minute.
func (n *Node) jobStoreSweep() time.Duration {
	return min(max(time.Duration(n.Config.Store.JobRetention)/10, time.Second), time.Minute)
}

// keepJobStores ends the store of every job that is over and drops those
// whose retention has passed, until ctx ends.
func (n *Node) keepJobStores(ctx context.Context) {
	t := time.NewTicker(n.jobStoreSweep())
	defer t.Stop()
	for {
		n.endJobStores(ctx, time.Now())
		if dropped, err := n.jobStores.Sweep(ctx); err != nil {
			n.Log.Warn("dropping job stores", "err", err)
		} else if len(dropped) > 0 {
			n.Log.Info("job stores dropped after their retention", "jobs", len(dropped))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// endJobStores ends the store of every held job that is over at now.
func (n *Node) endJobStores(ctx context.Context, now time.Time) {
	for _, id := range n.jobStores.Held() {
		if over, err := n.jobStoreOver(ctx, id, now); err == nil && over {
			if err := n.jobStores.End(ctx, id, now); err != nil {
				n.Log.Warn("ending a job store", "job", id, "err", err)
			}
		}
	}
}

// jobStoreOver is jobOver for a job whose store this node holds: with a
// chain the chain says (a record saying a job is over could be written
// by anyone). A job whose JobInfo the mesh store does not hold yet (it
// was learned from the Jobs channel, and the store lags) is not over
// until a retention has passed since its store opened.
func (n *Node) jobStoreOver(ctx context.Context, id jobs.ID, now time.Time) (bool, error) {
	if _, err := n.Store.Get(ctx, records.JobKey(id)); errors.Is(err, crdt.ErrNotFound) {
		opened, _, ok := n.jobStores.Times(id)
		return ok && now.Sub(opened) >= time.Duration(n.Config.Store.JobRetention), nil
	}
	return n.jobOver(ctx, id, now)
}
