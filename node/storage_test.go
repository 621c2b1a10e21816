package node_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/examples"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshclient"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// gcGrace is the storage test meshes' GC grace period: short, so that an
// unpinned result is collected long before its job needs it.
const gcGrace = 2 * time.Second

// storageMesh starts processors and one client whose block layers collect
// garbage every 300ms with a short grace period.
func storageMesh(t *testing.T, processors int) (*localmesh.Mesh, *localmesh.Member) {
	t.Helper()
	m := meshtest.New(t, localmesh.Options{
		Processors: processors, Clients: 1,
		Configure: func(_ *localmesh.Member, cfg *node.Config) {
			cfg.IPFS.GCInterval = node.Duration(300 * time.Millisecond)
			cfg.IPFS.GCGrace = node.Duration(gcGrace)
		},
		Processor: func(_ *localmesh.Member, pc *processor.Config) {
			pc.Poll = 200 * time.Millisecond
			pc.DiscloseGrace = 2 * time.Second
			// The client has no wallet key to sign a reveal: its jobs'
			// checks are drawn from the lapse seed, after this.
			pc.RevealTimeout = 5 * time.Second
		},
	})
	for _, mem := range m.Running() {
		if mem.Role == node.RoleClient {
			return m, mem
		}
	}
	t.Fatal("no client")
	return nil, nil
}

func submitWordcount(t *testing.T, client *localmesh.Member, micro uint32) *jobs.JobInfo {
	t.Helper()
	ctx := context.Background()
	code, err := examples.Build(ctx, "wordcount")
	if err != nil {
		t.Fatal(err)
	}
	info, err := client.DApp.Submit(ctx, dapp.Spec{
		Code: code, Data: []byte(strings.Repeat("the quick brown fox jumps over the lazy dog\n", 40)),
		Slicing: jobs.Slicing{BlockSize: 128, MicroJobs: micro, BlocksPerMicro: 2},
		Price:   big.NewInt(1000), Deadline: time.Now().Add(time.Hour), Creator: "0x00000000000000000000000000000000000000c1",
	})
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// waitGrace waits until the GC grace period has passed since start: the
// nodes' block layers run on the wall clock.
func waitGrace(t *testing.T, start time.Time) {
	t.Helper()
	wait.Until(t, 2*gcGrace, func() error {
		if time.Since(start) < gcGrace {
			return errors.New("the grace period is not over")
		}
		return nil
	})
}

func gcRuns(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() == "jobmesh_ipfs_gc_runs_total" {
			for _, m := range mf.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

// TestJobResultsSurviveGC runs a job on nodes that collect garbage every
// 300ms with a 2s grace period: the MicroJob results, the assembled
// output and the creator's inputs are pinned, so the job completes, and
// every disclosed result is still whole on its processor after the
// verdict and a further collection.
func TestJobResultsSurviveGC(t *testing.T) {
	m, client := storageMesh(t, 2)
	info := submitWordcount(t, client, 4)
	id := info.ID()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := client.DApp.WaitVerdict(ctx, id, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verdict.Verified {
		t.Fatalf("verdict %+v", res.Verdict)
	}
	byPeer := map[string]*localmesh.Member{}
	for _, mem := range m.Running() {
		byPeer[mem.Host.ID().String()] = mem
		if mem.Role != node.RoleBootstrap && gcRuns(t, mem.Metrics) < 5 {
			t.Fatalf("member %d ran %v GCs during the job", mem.Index, gcRuns(t, mem.Metrics))
		}
	}
	// Past the grace period, after one more collection, every result is
	// still whole where it was produced.
	waitGrace(t, time.Now())
	recs, err := client.Store.Query(ctx, records.JobKey(id))
	if err != nil {
		t.Fatal(err)
	}
	results := 0
	for _, r := range recs {
		k, err := records.Parse(r.Key)
		if err != nil || k.Type != records.ResultType {
			continue
		}
		d, err := microjob.DecodeDisclosure(r.Payload)
		if err != nil {
			t.Fatal(err)
		}
		mem := byPeer[d.Processor]
		if _, err := mem.IPFS.GC(ctx); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := mem.IPFS.LocalDAG(ctx, d.ResultCID, 1<<20); err != nil || !ok {
			t.Fatalf("result %s of %s lost on its processor (%v)", d.ResultCID, d.MicroID, err)
		}
		results++
	}
	if results < 4 {
		t.Fatalf("%d results disclosed", results)
	}
	// The replicated store's history shares the block store: every
	// member has the whole DAG under its heads after GC. A head can name
	// a branch the store is still fetching (go-ds-crdt makes a delta a
	// head once one of its children is known), so wholeness is awaited;
	// a block the GC deleted would never come back.
	for _, mem := range m.Running() {
		wait.Until(t, 30*time.Second, func() error {
			if _, err := mem.IPFS.GC(ctx); err != nil {
				return err
			}
			heads, err := mem.MeshStore().Heads(ctx)
			if err != nil || len(heads) == 0 {
				return fmt.Errorf("member %d: heads %v, %v", mem.Index, heads, err)
			}
			for _, h := range heads {
				if _, ok, err := mem.IPFS.LocalDAG(ctx, h, 1<<30); err != nil || !ok {
					return fmt.Errorf("member %d: the store's DAG under %s is not whole after GC (%v)", mem.Index, h, err)
				}
			}
			return nil
		})
	}
	if b := readOutput(t, ctx, client, info, res.Output); len(b) == 0 {
		t.Fatal("empty output")
	}
}

// readOutput reads the output file of a job's output directory through
// mem's block layer.
func readOutput(t *testing.T, ctx context.Context, mem *localmesh.Member, info *jobs.JobInfo, out cid.Cid) []byte {
	t.Helper()
	dir, err := mem.IPFS.DAGService().Get(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	l, _, err := dir.ResolveLink([]string{microjob.OutputFileName(info.Output.Kind)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := mem.IPFS.Cat(ctx, l.Cid)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCreatorHoldsTheOutput: after the verdict the creator's node fetches
// and pins the output and writes its holder record; the holders list (the
// API's and the store's) names it beside the assembler, and the creator
// still serves the output with every processor gone.
func TestCreatorHoldsTheOutput(t *testing.T) {
	m, client := storageMesh(t, 2)
	info := submitWordcount(t, client, 2)
	id := info.ID()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := client.DApp.WaitVerdict(ctx, id, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	self := client.Host.ID()
	var holders []peer.ID
	wait.Until(t, time.Minute, func() error {
		holders, err = finish.Holders(ctx, client.Store, client.IPFS, id)
		if err != nil {
			return err
		}
		if !slices.Contains(holders, self) {
			return fmt.Errorf("holders %v, want the creator %s among them", holders, self)
		}
		return nil
	})
	if ok, err := client.IPFS.IsPinned(ctx, res.Output); err != nil || !ok {
		t.Fatalf("creator's output not pinned: %v", err)
	}
	srv := httptest.NewServer(api.NewHandler(client.Node.APIDeps(), client.Node.Config.API))
	defer srv.Close()
	j, err := meshclient.New(srv.URL).Job(ctx, id.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range holders {
		if !slices.Contains(j.Holders, h.String()) {
			t.Fatalf("GET /v1/jobs/{id} holders %v, want %v", j.Holders, holders)
		}
	}
	// Every processor stops; past the grace period and a GC the creator
	// still has the whole output.
	for _, mem := range m.Running() {
		if mem.Role == node.RoleProcessor {
			if err := m.Stop(mem.Index); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitGrace(t, time.Now())
	if _, err := client.IPFS.GC(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := client.IPFS.LocalDAG(ctx, res.Output, 64<<20); err != nil || !ok {
		t.Fatalf("output not whole on the creator's node: %v", err)
	}
	short, cancel2 := context.WithTimeout(ctx, 10*time.Second)
	defer cancel2()
	if b := readOutput(t, short, client, info, res.Output); len(b) == 0 {
		t.Fatal("empty output with no processor left")
	}
}
