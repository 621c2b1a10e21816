package api_test

import (
	"context"
	"fmt"
	"math/big"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshclient"
	"github.com/jobmesh/jobmesh/meshtest"
)

// TestDispatchEndpoints: a client node's API lists both processors with
// stake 1 (no chain) and the weights the QoS formulas give, and shows jobs no
// processor can serve in their queue groups, a replicated one in its own,
// with their task values.
func TestDispatchEndpoints(t *testing.T) {
	m := meshtest.New(t, localmesh.Options{
		Processors: 2, Clients: 1,
		Timers: localmesh.Timers{FactsEvery: 200 * time.Millisecond},
	})
	cl := m.Members[len(m.Members)-1]
	srv := httptest.NewServer(nodeHandler(cl.Node))
	defer srv.Close()
	c := meshclient.New(srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	wait.Until(t, 30*time.Second, func() error {
		dn, err := c.DispatchNodes(ctx)
		if err != nil {
			return err
		}
		if dn.Live != 2 || len(dn.Processors) != 2 || dn.TimeoutWindow != 3 {
			return fmt.Errorf("%d live processors, timeout window %d", dn.Live, dn.TimeoutWindow)
		}
		for _, p := range dn.Processors {
			// Equal stakes: S = 1. No VRAM (R = 0), the default 5m
			// timeout, above the 1m minimum (P = 0), no task yet (B = 1):
			// Q = 2/4, W = S·Q/(S+Q) = 1/3.
			if p.StakeWei != "1" || p.QoS != 0.5 || p.Weight != 1.0/3 || p.CardModel != "cpu" ||
				p.VRAMScore != 0 || p.TimeoutScore != 0 || p.SpeedScore != 1 || p.Kicked != "" || p.KickedAt != nil || p.Timeouts != 0 {
				return fmt.Errorf("processor %+v", p)
			}
		}
		return nil
	})

	data := make([]byte, 8*3)
	submit := func(price int64, replicas uint32) *jobs.JobInfo {
		t.Helper()
		info, err := cl.DApp.Submit(ctx, dapp.Spec{
			Code: []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}, Data: data,
			Slicing:      jobs.Slicing{BlockSize: 8, MicroJobs: 3, BlocksPerMicro: 1, VerifierBlocks: 1},
			Price:        big.NewInt(price),
			Creator:      "0x00000000000000000000000000000000000000c1",
			Deadline:     time.Now().Add(time.Hour),
			Output:       jobs.Output{Kind: jobs.OutputConcat},
			Requirements: jobs.Requirements{GPUModel: "nobody-has-it", MinVRAMMiB: 1024, Replicas: replicas},
		})
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	info, x3 := submit(1_000_000, 1), submit(2_000_000, 3)
	q, err := c.Queue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 3 blocks: 30s + 3·20s = 90s; 1e6 wei / 90 s. The replicated job is
	// in a group of its own, first for its better value.
	want := api.QueueJob{ID: info.ID().String(), PriceWei: "1000000", Value: "11111.111111", EstimatedSeconds: 90}
	wantX3 := api.QueueJob{ID: x3.ID().String(), PriceWei: "2000000", Value: "22222.222222", EstimatedSeconds: 90}
	if q.Live != 2 || q.Cap != 64 || len(q.Groups) != 2 ||
		q.Groups[0].Label != "1024/nobody-has-it/x3" || len(q.Groups[0].Jobs) != 1 || q.Groups[0].Jobs[0] != wantX3 ||
		q.Groups[1].Label != "1024/nobody-has-it" || len(q.Groups[1].Jobs) != 1 || q.Groups[1].Jobs[0] != want {
		t.Fatalf("queue %+v, want 1024/nobody-has-it/x3 with %+v, then 1024/nobody-has-it with %+v", q, wantX3, want)
	}
}
