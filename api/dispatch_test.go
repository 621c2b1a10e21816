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
// stake 1 (no chain) and the weights the QoS formulas give, and shows a job no
// processor can serve in its queue group with its task value.
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
	info, err := cl.DApp.Submit(ctx, dapp.Spec{
		Code: []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}, Data: data,
		Slicing:      jobs.Slicing{BlockSize: 8, MicroJobs: 3, BlocksPerMicro: 1, VerifierBlocks: 1},
		Price:        big.NewInt(1_000_000),
		Creator:      "0x00000000000000000000000000000000000000c1",
		Deadline:     time.Now().Add(time.Hour),
		Output:       jobs.Output{Kind: jobs.OutputConcat},
		Requirements: jobs.Requirements{GPUModel: "nobody-has-it", MinVRAMMiB: 1024},
	})
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.Queue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 3 blocks: 30s + 3·20s = 90s; 1e6 wei / 90 s.
	want := api.QueueJob{ID: info.ID().String(), PriceWei: "1000000", Value: "11111.111111", EstimatedSeconds: 90}
	if q.Live != 2 || q.Cap != 64 || len(q.Groups) != 1 || q.Groups[0].Label != "1024/nobody-has-it" ||
		len(q.Groups[0].Jobs) != 1 || q.Groups[0].Jobs[0] != want {
		t.Fatalf("queue %+v, want one group 1024/nobody-has-it with %+v", q, want)
	}
}
