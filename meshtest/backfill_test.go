package meshtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/node"
)

// TestLateJoinerBackfillsTheHistory: a node that joins after one writer
// made a history of 40 updates, one after another, gets most of them by
// backfill from a peer (crdt.Backfill), not one bitswap round trip each,
// and reads every record.
func TestLateJoinerBackfillsTheHistory(t *testing.T) {
	const updates = 40
	m := New(t, localmesh.Options{Processors: 2})
	WaitConnected(t, m)
	ctx := context.Background()
	want := map[string][]byte{}
	for i := range updates {
		k := fmt.Sprintf("/test/history/%d", i)
		want[k] = []byte(fmt.Sprintf("update %d", i))
		if err := m.Members[1].Store.Put(ctx, k, "test", want[k]); err != nil {
			t.Fatal(err)
		}
	}
	wait.Until(t, time.Minute, func() error { return readAll(ctx, m, want) })

	late, err := m.Add(ctx, node.RoleProcessor)
	if err != nil {
		t.Fatal(err)
	}
	wait.Until(t, time.Minute, func() error {
		for k := range want {
			if _, err := late.Store.Get(ctx, k); err != nil {
				return fmt.Errorf("the newcomer: %s: %w", k, err)
			}
		}
		return nil
	})
	got := crdttest.Metric(t, late.Node.Metrics, "jobmesh_crdt_backfill_blocks_total", map[string]string{"direction": "received"})
	if got < updates/2 {
		t.Fatalf("the newcomer backfilled %v blocks of a history of %d updates", got, updates)
	}
}
