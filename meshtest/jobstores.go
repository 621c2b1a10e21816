package meshtest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
)

// WaitJobStoreDropped waits, up to within, until no running member of m
// holds job id's store or keeps a key of it.
func WaitJobStoreDropped(t testing.TB, m *localmesh.Mesh, id jobs.ID, within time.Duration) {
	t.Helper()
	ctx := context.Background()
	wait.Until(t, within, func() error {
		for _, mem := range m.Running() {
			if mem.JobStores() == nil {
				continue
			}
			if slices.Contains(mem.JobStores().Held(), id) {
				return fmt.Errorf("member %d still holds the job's store", mem.Index)
			}
			if n, err := mem.JobStores().Stored(ctx, id); err != nil || n != 0 {
				return fmt.Errorf("member %d keeps %d keys of the job (%v)", mem.Index, n, err)
			}
		}
		return nil
	})
}
