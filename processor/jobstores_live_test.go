package processor_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/jobstore"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/records"
)

// TestJobStoresKeepBystandersOut runs a job on the three processors with
// the card model it asks for, beside a fourth that cannot serve it. The
// job's own records live in its store, which the bystander never joins:
// it holds no key of it, no job-level record of it, no subscription to
// its topic. Once the job is over and the retention has passed, every
// participant has dropped the job's store.
func TestJobStoresKeepBystandersOut(t *testing.T) {
	const bystander = 4
	m := flowMeshWith(t, localmesh.Options{
		Processors: 4,
		Configure: func(mem *localmesh.Member, cfg *node.Config) {
			cfg.Store.JobStores = true
			cfg.Store.JobRetention = node.Duration(3 * time.Second)
			if mem.Role == node.RoleProcessor && mem.Index != bystander {
				cfg.Processor.CardModel = "rtx4090"
			}
		},
	}, nil)
	job := newMandelbrot(t, 64, 64, 16)
	spec := job.spec(4, 2)
	spec.Requirements = jobs.Requirements{GPUModel: "rtx4090"}
	info, res := runJob(t, m, spec, 3*time.Minute)
	checkComplete(t, info, res)
	id := info.ID()
	ctx := context.Background()

	by := m.Members[bystander]
	if slices.Contains(by.JobStores().Held(), id) {
		t.Fatal("the bystander joined the job's store")
	}
	if n, err := by.JobStores().Stored(ctx, id); err != nil || n != 0 {
		t.Fatalf("the bystander stores %d keys of the job (%v)", n, err)
	}
	if slices.Contains(by.Host.PubSub.GetTopics(), jobstore.Topic(id)) {
		t.Fatal("the bystander subscribed to the job store's topic")
	}
	recs, err := by.Store.Query(ctx, records.JobKey(id)+"/")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if l, _, err := records.KeyLevel(r.Key); err != nil || l != records.MeshLevel {
			t.Fatalf("the bystander holds %s (%s)", r.Key, r.Type)
		}
	}
	// The job's own records went to its store, not to the mesh's.
	for _, mem := range m.Running() {
		recs, err := mem.MeshStore().Query(ctx, records.JobKey(id)+"/")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if l, _, _ := records.KeyLevel(r.Key); l == records.JobLevel {
				t.Fatalf("member %d's mesh store holds the job-level record %s", mem.Index, r.Key)
			}
		}
	}

	// Over (a verdict that counts, on a mesh without a chain) and past
	// its retention: every participant drops the job's store.
	meshtest.WaitJobStoreDropped(t, m, id, 2*time.Minute)
}
