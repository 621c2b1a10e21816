package jobstore

import (
	"context"
	"sync"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
)

// Watch follows the changes under prefix: the mesh store's and those of
// every job store whose records lie under prefix (every one for "/" or
// "/jobs", one job's for a prefix inside that job), whether it is open at
// the call or opens while the watch lives. Changes of different stores
// come in no set order; a ChangeOverflow from any store means: Query the
// prefix to resync. A job store that is dropped ends its part of the
// watch, not the watch. The channel is closed when ctx ends or the mesh
// store closes.
func (r *Router) Watch(ctx context.Context, prefix string) <-chan crdt.Change {
	sc := scopeOf(prefix)
	if !sc.all && !sc.one {
		return r.mesh.Watch(ctx, prefix)
	}
	ctx, cancel := context.WithCancel(ctx)
	mesh := r.mesh.Watch(ctx, prefix)
	out := make(chan crdt.Change)
	send := func(c crdt.Change) bool {
		select {
		case out <- c:
			return true
		case <-ctx.Done():
			return false
		}
	}
	forward := func(in <-chan crdt.Change) {
		for c := range in {
			if !send(c) {
				return
			}
		}
	}
	var wg sync.WaitGroup
	// Follow's function runs under the Manager's lock: it only starts a
	// watch, which never blocks, and its forwarder. No forwarder starts
	// once stop has returned, so wg.Wait below sees every one.
	stop := r.jobs.Follow(func(id jobs.ID, s *crdt.Store) {
		if !sc.covers(id) {
			return
		}
		in := s.Watch(ctx, prefix)
		wg.Go(func() { forward(in) })
	})
	go func() {
		forward(mesh)
		stop()
		cancel()
		wg.Wait()
		close(out)
	}()
	return out
}
