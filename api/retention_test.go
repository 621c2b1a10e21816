package api_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshclient"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/records"
)

// TestSettledJobOutlivesItsStore: on a mesh with a chain and job stores,
// a settled job's store is dropped by every node that held it once the
// retention has passed (no key, none of its DAG blocks), and the job's
// state, output CID, verdict digest and settlement are still answered
// (what `jobnode job status` reads), from its outcome summary in the mesh
// store; its output is still served, and every node's QoS ledger replays
// its tasks from that summary alike.
func TestSettledJobOutlivesItsStore(t *testing.T) {
	m := meshtest.New(t, localmesh.Options{
		Processors: 3, Clients: 1, Chain: &localmesh.ChainOptions{},
		Timers: localmesh.Timers{Poll: 200 * time.Millisecond, DiscloseGrace: 2 * time.Second},
		Configure: func(_ *localmesh.Member, cfg *node.Config) {
			cfg.Store.JobStores = node.JobStoresOn
			cfg.Store.JobRetention = node.Duration(3 * time.Second)
		},
	})
	var client *localmesh.Member
	for _, mem := range m.Running() {
		if mem.Role == node.RoleClient {
			client = mem
		}
	}
	srv := httptest.NewServer(nodeHandler(client.Node))
	defer srv.Close()
	c := meshclient.New(srv.URL)

	ctx := context.Background()
	id := submitWordcount(t, ctx, client, big.NewInt(3_000_000_000)).ID()

	var settled apiv1.Job
	blocks := map[int][]cid.Cid{} // member index → the job store's DAG blocks
	wait.Until(t, 3*time.Minute, func() error {
		var err error
		// Its DAG blocks, while the stores are held: read at every
		// poll, since under load the retention may end before a poll
		// sees the job settled.
		for _, mem := range m.Running() {
			if mem.JobStores() == nil {
				continue
			}
			if s, ok := mem.JobStores().Get(id); ok {
				if bs, err := s.Merged(ctx); err == nil && len(bs) >= len(blocks[mem.Index]) {
					blocks[mem.Index] = bs
				}
			}
		}
		if settled, err = c.Job(ctx, id.String()); err != nil {
			return err
		}
		if settled.State != apiv1.JobSettled {
			return fmt.Errorf("job is %s", settled.State)
		}
		return nil
	})
	if len(blocks) < 2 {
		t.Fatalf("%d nodes held the job's store when it settled, want its processors and creator", len(blocks))
	}
	output := fetchOutput(t, ctx, c, id)

	// Past the retention, every node has dropped the job's store.
	meshtest.WaitJobStoreDropped(t, m, id, 2*time.Minute)
	for i, bs := range blocks {
		for _, b := range bs {
			if has, err := m.Members[i].Node.IPFS.Blockstore().Has(ctx, b); err != nil || has {
				t.Fatalf("member %d keeps block %s of the dropped store (%v)", i, b, err)
			}
		}
	}
	// The job's own records are gone; its summary answers.
	if recs, err := client.Store.Query(ctx, records.JobKey(id)+"/verdict"); err != nil || len(recs) != 0 {
		t.Fatalf("the client still reads %d verdict records (%v)", len(recs), err)
	}
	after, err := c.Job(ctx, id.String())
	if err != nil {
		t.Fatal(err)
	}
	if after.State != apiv1.JobSettled || !after.Verified || after.OutputCID != settled.OutputCID ||
		after.VerifierDigest != settled.VerifierDigest || after.SettlementTx != settled.SettlementTx ||
		!maps.Equal(after.Payouts, settled.Payouts) {
		t.Fatalf("after the retention the job reads\n%+v\nbefore it\n%+v", after, settled)
	}
	if got := fetchOutput(t, ctx, c, id); got != output {
		t.Fatal("the output changed after the retention")
	}
	// Every node with a chain, its records of the job gone, replays the
	// job's tasks from the summary: one QoS ledger everywhere.
	wait.Until(t, time.Minute, func() error {
		want := ""
		for _, mem := range m.Running() {
			if mem.Node.Escrow == nil {
				continue
			}
			v, err := mem.Node.DispatchView(ctx)
			if err != nil {
				return err
			}
			got := fmt.Sprint(v.Tasks)
			for _, p := range v.Processors {
				got += fmt.Sprintf(" %s:%g:%d", p.ID, p.SpeedScore, p.Timeouts)
			}
			switch {
			case v.Tasks == 0:
				return fmt.Errorf("member %d replays no task", mem.Index)
			case want == "":
				want = got
			case got != want:
				return fmt.Errorf("member %d's ledger %s, another's %s", mem.Index, got, want)
			}
		}
		return nil
	})
}

func fetchOutput(t *testing.T, ctx context.Context, c *meshclient.Client, id jobs.ID) string {
	t.Helper()
	r, err := c.Output(ctx, id.String())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil || len(b) == 0 {
		t.Fatalf("output: %d bytes (%v)", len(b), err)
	}
	return string(b)
}
