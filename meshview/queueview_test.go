package meshview_test

import (
	"crypto/sha256"
	"math/big"
	"slices"
	"testing"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/meshview"
)

// TestEvictions: over the cap the lowest task values go first; at or
// under it nothing is evicted; the order of the input does not matter.
func TestEvictions(t *testing.T) {
	cfg := dispatch.DefaultConfig()
	cfg.QueueAlpha, cfg.MinQueueLen = 1, 1
	job := func(id string, price int64, units uint64) dispatch.Job {
		return dispatch.Job{ID: id, Price: big.NewInt(price), Units: units}
	}
	queued := []dispatch.Job{job("a", 100, 1), job("b", 1000, 1), job("c", 1000, 100), job("d", 50, 1)}
	for _, c := range []struct {
		live int
		want []string
	}{
		{4, nil},
		// Values in wei/s: a 100/50s = 2, b 1000/50s = 20, c 1000/2030s ≈
		// 0.49, d 50/50s = 1. live 0 still holds MinQueueLen = 1.
		{3, []string{"c"}},
		{2, []string{"c", "d"}},
		{0, []string{"c", "d", "a"}},
	} {
		for rot := range queued {
			in := append(append([]dispatch.Job(nil), queued[rot:]...), queued[:rot]...)
			got, err := meshview.Evictions(cfg, in, c.live)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("live %d: evicted %v, want %v", c.live, got, c.want)
			}
			for i := range got {
				if got[i].ID != c.want[i] {
					t.Fatalf("live %d: evicted %s at %d, want %v", c.live, got[i].ID, i, c.want)
				}
			}
		}
	}
}

// TestEvictionsCountReplicas: the cap counts processor slots, so a job
// with R = 3 replicas (from its JobInfo, through DispatchJob) counts 3
// times, and the lowest task values go until the slots fit.
func TestEvictionsCountReplicas(t *testing.T) {
	cfg := dispatch.DefaultConfig()
	cfg.QueueAlpha, cfg.MinQueueLen = 1, 1
	job := func(name string, price int64, replicas uint32) dispatch.Job {
		info := &jobs.JobInfo{PriceWei: big.NewInt(price), TaskSize: 1, Requirements: jobs.Requirements{Replicas: replicas}}
		return meshview.DispatchJob(info, &jobs.Plan{JobID: sha256.Sum256([]byte(name)), NumBlocks: 1})
	}
	x3, a, b := job("x3", 1000, 3), job("a", 10, 1), job("b", 20, 1)
	name := map[string]string{x3.ID: "x3", a.ID: "a", b.ID: "b"}
	queued := []dispatch.Job{x3, a, b} // 5 slots
	for _, c := range []struct {
		live int
		want []string
	}{
		{5, nil},
		{4, []string{"a"}},
		{3, []string{"a", "b"}},
		// A job that needs more slots than the cap is evicted too.
		{2, []string{"a", "b", "x3"}},
	} {
		got, err := meshview.Evictions(cfg, queued, c.live)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, j := range got {
			names = append(names, name[j.ID])
		}
		if !slices.Equal(names, c.want) {
			t.Errorf("live %d: evicted %v, want %v", c.live, names, c.want)
		}
	}
}
