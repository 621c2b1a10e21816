package processor_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// TestClientReportsTheSettlementAfterALateRecord: a record that reaches
// the client after its job settled (a processor's took record of a
// MacroJob it committed nothing in) changes the rounds the client judges
// by, so that no verdict follows from its records, and no processor
// writes another (their verdicts are held once the job settled). The job
// is settled all the same: a client that waits for it reports the
// verdict the escrow was released on.
func TestClientReportsTheSettlementAfterALateRecord(t *testing.T) {
	var settled atomic.Bool
	m := chainMesh(t, 4, func(_ *localmesh.Member, pc *processor.Config) {
		pc.BeforeVerdict = func(jobs.ID) bool { return !settled.Load() }
	})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := client(m)
	info, err := c.DApp.Submit(ctx, newMandelbrot(t, 192, 160, 32).spec(3, 4))
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID()
	res, err := c.DApp.Wait(ctx, id, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	checkComplete(t, info, res)
	settled.Store(true)

	late, macro := idleLocker(t, ctx, m, info)
	if err := late.Store.Put(ctx, records.TookKey(id, macro, late.Host.ID().String()), records.TookType, nil); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, time.Minute, func() error {
		if _, err := c.Store.Get(ctx, records.TookKey(id, macro, late.Host.ID().String())); err != nil {
			return fmt.Errorf("the late took record has not reached the client: %w", err)
		}
		if _, err := finish.ReadVerdict(ctx, c.Store, c.IPFS, id, nil); !errors.Is(err, finish.ErrNoVerdict) {
			return fmt.Errorf("a verdict still follows from the client's records (%v)", err)
		}
		return nil
	})
	got, err := c.DApp.Wait(ctx, id, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if got.Release == nil || got.Release.TxHash != res.Release.TxHash || got.Output != res.Output {
		t.Fatalf("reported %+v after the late record, settled %+v", got, res)
	}
}

// idleLocker returns a processor of the mesh and a MacroJob of job info
// in which it has no commitment in the client's store.
func idleLocker(t *testing.T, ctx context.Context, m *localmesh.Mesh, info *jobs.JobInfo) (*localmesh.Member, uint64) {
	t.Helper()
	plan, err := jobs.Slice(info)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := client(m).Store.Query(ctx, records.JobKey(info.ID())+"/macro/")
	if err != nil {
		t.Fatal(err)
	}
	committed := map[string]map[uint64]bool{}
	for _, r := range recs {
		k, err := records.Parse(r.Key)
		if err != nil || r.Type != records.CommitType {
			continue
		}
		if committed[r.Author.String()] == nil {
			committed[r.Author.String()] = map[uint64]bool{}
		}
		committed[r.Author.String()][k.Macro] = true
	}
	for _, p := range processorsOf(m) {
		for macro := range uint64(len(plan.Macros)) {
			if !committed[p.Host.ID().String()][macro] {
				return p, macro
			}
		}
	}
	t.Fatal("every processor committed in every MacroJob")
	return nil, 0
}
