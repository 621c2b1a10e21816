package models

import (
	"fmt"
	"math/big"
	"slices"
	"testing"

	"github.com/jobmesh/jobmesh/dispatch"
)

// candidates are n live processors with 16 GiB of VRAM, equal stakes and
// QoS; models[i] are processor i's models.
func candidates(n int, models map[int][]string) []Candidate {
	out := make([]Candidate, n)
	for i := range out {
		out[i].Node = dispatch.Node{ID: fmt.Sprintf("p%d", i), CardModel: "cpu", VRAM: 16384, QoS: 1, Stake: big.NewInt(1), LocalModels: models[i]}
	}
	return out
}

// TestPreDownloads: a model fewer than MinModelHolders eligible
// processors hold is fetched by as many others as it lacks, never by a
// holder, an ineligible or a kicked-out processor; models the job does
// not need count for nothing, and a well-held model names nobody.
func TestPreDownloads(t *testing.T) {
	cfg := dispatch.DefaultConfig()
	live := candidates(9, map[int][]string{0: {"rare", "common", "other"}, 1: {"common"}, 2: {"common"}})
	live[5].Kicked = true
	live[8].VRAM = 1024 // too small for the job
	job := dispatch.Job{ID: "j", MinVRAM: 8192, Models: []string{"rare", "common"}}
	named := map[string]bool{}
	for s := range 20 {
		seed := []byte{byte(s)}
		pds, err := PreDownloads(cfg, job, live, seed)
		if err != nil {
			t.Fatal(err)
		}
		if len(pds) != 1 || pds[0].Model != "rare" || len(pds[0].Nodes) != cfg.MinModelHolders-1 {
			t.Fatalf("seed %d: %+v", s, pds)
		}
		rev := slices.Clone(live)
		slices.Reverse(rev)
		if again, err := PreDownloads(cfg, job, rev, seed); err != nil || !slices.Equal(again[0].Nodes, pds[0].Nodes) {
			t.Fatalf("seed %d: another order names %+v, %v", s, again, err)
		}
		for _, id := range pds[0].Nodes {
			if id == "p0" || id == "p5" || id == "p8" {
				t.Fatalf("seed %d named %s", s, id)
			}
			named[id] = true
		}
	}
	if len(named) < 3 {
		t.Fatalf("20 seeds named only %v", named)
	}
	if pds, err := PreDownloads(cfg, dispatch.Job{ID: "j", Models: []string{"common"}}, live, nil); err != nil || len(pds) != 0 {
		t.Fatalf("well-held model: %+v, %v", pds, err)
	}
	if pds, err := PreDownloads(cfg, dispatch.Job{ID: "j"}, live, nil); err != nil || pds != nil {
		t.Fatalf("no models: %+v, %v", pds, err)
	}
}

// TestNamed: a processor fetches the models it is named for, once each,
// sorted, and not those on disk.
func TestNamed(t *testing.T) {
	pds := []dispatch.PreDownload{
		{Model: cidB, Nodes: []string{"a", "b"}},
		{Model: cidA, Nodes: []string{"b"}},
		{Model: cidB, Nodes: []string{"b", "c"}},
		{Model: "held", Nodes: []string{"b"}},
		{Model: "other", Nodes: []string{"a", "c"}},
	}
	has := func(m string) bool { return m == "held" }
	if got := Named("b", pds, has); !slices.Equal(got, []string{cidB, cidA}) {
		t.Fatalf("b: %v", got)
	}
	if got := Named("x", pds, has); len(got) != 0 {
		t.Fatalf("named nowhere: %v", got)
	}
}
