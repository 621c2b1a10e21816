package dapp_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/node"
)

// TestJobsCarryTheClientsTerms: a job's escrow holds the terms of its
// client's [client] section, read back from the chain: the configured
// ones on one client, the local mesh's defaults on another. A deadline
// that does not leave the quiet period is refused before anything is
// funded or published.
func TestJobsCarryTheClientsTerms(t *testing.T) {
	configured := escrow.Terms{Quiet: 7 * time.Second, MinSigners: 3}
	m := meshtest.New(t, localmesh.Options{
		Processors: 1, Clients: 2, Chain: &localmesh.ChainOptions{},
		Configure: func(mem *localmesh.Member, cfg *node.Config) {
			if mem.Index == 2 {
				cfg.Client = node.ClientConfig{Quiet: node.Duration(configured.Quiet), MinSigners: configured.MinSigners}
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code := wordcount(t)
	for _, tc := range []struct {
		client *localmesh.Member
		want   escrow.Terms
	}{{m.Members[2], configured}, {m.Members[3], localmesh.DefaultTerms()}} {
		s := spec(code, 1<<20) // no processor joins: nobody has 1 TiB of VRAM
		s.Creator = ""
		info, err := tc.client.DApp.Submit(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		j, err := m.Escrow.Job(ctx, escrow.JobKey(tc.client.Wallet, common.Hash(info.ID())))
		if err != nil {
			t.Fatal(err)
		}
		if j.State != escrow.JobFunded || j.Terms != tc.want {
			t.Fatalf("client %d: job %s with terms %+v on chain, want funded with %+v", tc.client.Index, j.State, j.Terms, tc.want)
		}
	}
	c := m.Members[2]
	s := spec(code, 1<<20)
	s.Creator = ""
	s.Deadline = time.Now().Add(configured.Quiet / 2)
	if _, err := c.DApp.Submit(ctx, s); !errors.Is(err, dapp.ErrInvalidJob) {
		t.Fatalf("a deadline inside the quiet period: %v, want ErrInvalidJob", err)
	}
	if list, err := c.Store.Query(ctx, "/jobs"); err != nil || len(list) != 2 {
		t.Fatalf("%d records under /jobs (%v), want the 2 funded jobs only", len(list), err)
	}
}
