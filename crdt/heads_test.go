package crdt_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/crdt/crdttest"
)

// TestMergedNamesEveryDeltaAndTheHeads: on the writer and on a replica
// that received them, Merged names every delta written (one per Put),
// their blocks are in the replica's DAG, and the heads are
// among them.
func TestMergedNamesEveryDeltaAndTheHeads(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 2})
	ctx := context.Background()
	const writes = 5
	for i := range writes {
		if err := c.Replicas[0].Store.Put(ctx, fmt.Sprintf("/jobs/%d", i), "job", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range c.Replicas {
		// A walk merges the newest delta first: wait for every one.
		for i := range writes {
			c.WaitGet(r.Index, fmt.Sprintf("/jobs/%d", i), nil)
		}
		merged, err := r.Store.Merged(ctx)
		if err != nil {
			t.Fatal(err)
		}
		heads, err := r.Store.Heads(ctx)
		if err != nil || len(heads) == 0 {
			t.Fatalf("replica %d: heads %v, %v", r.Index, heads, err)
		}
		seen := map[string]bool{}
		for _, m := range merged {
			seen[string(m.Hash())] = true
		}
		for _, h := range heads {
			if !seen[string(h.Hash())] {
				t.Fatalf("replica %d: head %s is not among the merged blocks", r.Index, h)
			}
		}
		if len(seen) < writes {
			t.Fatalf("replica %d: %d merged deltas for %d writes", r.Index, len(seen), writes)
		}
		for _, m := range merged {
			if m.Type() != cid.DagProtobuf {
				t.Fatalf("replica %d: merged block %s is not dag-pb", r.Index, m)
			}
			if _, err := r.DAG.Get(ctx, m); err != nil {
				t.Fatalf("replica %d: merged block %s: %v", r.Index, m, err)
			}
		}
	}
}
