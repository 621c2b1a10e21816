package processor_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/jobstore"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/processor"
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
			cfg.Store.JobStores = node.JobStoresOn
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

// TestAskedRerunnersJoinTheStore runs a job on two processors with the
// card model it asks for, one of them a liar, beside two that cannot
// serve it and so never join the job's store by themselves. Every dispute
// and check between the two has those as the only re-runners left to
// draw: the requester names them in its ask record in the mesh store,
// they join the job's store, re-run the blocks, and the liar is found
// out.
func TestAskedRerunnersJoinTheStore(t *testing.T) {
	const liarIndex = 1
	others := []int{3, 4}
	var m *localmesh.Mesh
	liars := liarTune(&m, liarIndex)
	m = flowMeshWith(t, localmesh.Options{
		Processors: 4,
		Configure: func(mem *localmesh.Member, cfg *node.Config) {
			cfg.Store.JobStores = node.JobStoresOn
			if mem.Role == node.RoleProcessor && !slices.Contains(others, mem.Index) {
				cfg.Processor.CardModel = "rtx4090"
			}
		},
	}, func(mem *localmesh.Member, pc *processor.Config) {
		liars(mem, pc)
		pc.RerunTimeout = 30 * time.Second // a join waits for the store's heads
	})
	liar := m.Members[liarIndex].Host.ID().String()
	job := newMandelbrot(t, 64, 64, 16)
	spec := job.spec(4, 2)
	spec.Requirements = jobs.Requirements{GPUModel: "rtx4090"}
	info, res := runJob(t, m, spec, 4*time.Minute)
	checkComplete(t, info, res)
	if !slices.Equal(res.Culprits, []string{liar}) {
		t.Fatalf("culprits %v, want the liar %s", res.Culprits, liar)
	}
	id := info.ID()
	ctx := context.Background()
	recs, err := client(m).Store.Query(ctx, records.JobKey(id)+"/")
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range others {
		by := m.Members[i].Host.ID()
		var asked, reran bool
		for _, r := range recs {
			switch r.Type {
			case records.AskType:
				a, err := records.DecodeAsk(id, r.Payload)
				asked = asked || err == nil && slices.Contains(a.Peers, by.String())
			case records.RerunType:
				reran = reran || r.Author == by
			}
		}
		if !asked || !reran {
			t.Fatalf("member %d was named in an ask record: %v; re-ran a block: %v", i, asked, reran)
		}
	}
}

// TestLateJoinerReadsOnlyTheMeshStore: on a mesh with a chain and job
// stores, two jobs settle and their stores are dropped, and a third waits
// for a card model nobody has. A processor that joins afterwards with a
// fresh repo is ready from the mesh store alone: it knows every
// processor's advertisement, lists only the third job open, replays the
// settled jobs' QoS tasks as the client's node does, and holds none of
// their job-level records nor any of their stores.
func TestLateJoinerReadsOnlyTheMeshStore(t *testing.T) {
	m := flowMeshWith(t, localmesh.Options{
		Processors: 3, Chain: &localmesh.ChainOptions{},
		Configure: func(_ *localmesh.Member, cfg *node.Config) {
			cfg.Store.JobStores = node.JobStoresOn
			cfg.Store.JobRetention = node.Duration(3 * time.Second)
		},
	}, nil)
	ctx := context.Background()
	c := client(m)
	job := newMandelbrot(t, 64, 64, 16)
	var settled []jobs.ID
	for range 2 {
		info, res := runJob(t, m, job.spec(4, 2), 3*time.Minute)
		checkComplete(t, info, res)
		settled = append(settled, info.ID())
	}
	spec := job.spec(4, 2)
	spec.Requirements = jobs.Requirements{GPUModel: "h100"}
	open, _ := submitPlan(t, ctx, m, spec)
	for _, id := range settled {
		meshtest.WaitJobStoreDropped(t, m, id, 2*time.Minute)
	}

	late, err := m.Add(ctx, node.RoleProcessor)
	if err != nil {
		t.Fatal(err)
	}
	wait.Until(t, time.Minute, func() error {
		v, err := late.Node.DispatchView(ctx)
		if err != nil {
			return err
		}
		if v.Live() != 4 {
			return fmt.Errorf("the late joiner sees %d live processors", v.Live())
		}
		q, err := late.Node.Queue(ctx)
		if err != nil {
			return err
		}
		var queued []jobs.ID
		for _, g := range q.Groups {
			for _, j := range g.Jobs {
				queued = append(queued, j.ID)
			}
		}
		if !slices.Equal(queued, []jobs.ID{open.ID()}) {
			return fmt.Errorf("the late joiner queues %v, want only %s", queued, open.ID())
		}
		ref, err := c.Node.DispatchView(ctx)
		if err != nil {
			return err
		}
		if v.Tasks == 0 || v.Tasks != ref.Tasks {
			return fmt.Errorf("the late joiner replays %d tasks, the client's node %d", v.Tasks, ref.Tasks)
		}
		return nil
	})
	for _, id := range settled {
		if slices.Contains(late.JobStores().Held(), id) {
			t.Fatalf("the late joiner joined the store of settled job %s", id)
		}
		recs, err := late.Store.Query(ctx, records.JobKey(id)+"/")
		if err != nil {
			t.Fatal(err)
		}
		summary := false
		for _, r := range recs {
			if l, _, err := records.KeyLevel(r.Key); err != nil || l != records.MeshLevel {
				t.Fatalf("the late joiner holds %s (%s) of settled job %s", r.Key, r.Type, id)
			}
			summary = summary || r.Type == records.SummaryType
		}
		if !summary {
			t.Fatalf("the late joiner holds no summary of settled job %s", id)
		}
	}
}
