package dispatch

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"testing"
)

func node(id, model string, vram uint64) Node {
	return Node{ID: id, CardModel: model, VRAM: vram, Stake: big.NewInt(1_000_000), QoS: 1}
}

func mustPool(t testing.TB, nodes ...Node) *Pool {
	t.Helper()
	p, err := NewPool(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if err := p.Add(n, true); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// candidates returns the IDs that a job can ever be given, found by drawing
// many times.
func drawn(t *testing.T, p *Pool, job Job, draws int) map[string]int {
	t.Helper()
	out := map[string]int{}
	for i := range draws {
		sel, err := p.Select(job, Seed([]byte(job.ID), []byte(fmt.Sprint(i))))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range sel.Nodes {
			out[n]++
		}
	}
	return out
}

func keys(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestGradingCandidates(t *testing.T) {
	p := mustPool(t,
		node("a", "4090", 24576), node("b", "3080", 10240), node("c", "4080", 16384),
		node("d", "A100", 81920), node("e", "4090", 24576), node("f", "3060", 8192))
	for _, tc := range []struct {
		name string
		job  Job
		want []string
	}{
		{"min 16 GiB", Job{ID: "j1", Price: big.NewInt(1), MinVRAM: 16384}, []string{"a", "c", "d", "e"}},
		{"any card", Job{ID: "j2", Price: big.NewInt(1)}, []string{"a", "b", "c", "d", "e", "f"}},
		{"required GPU model", Job{ID: "j3", Price: big.NewInt(1), GPUModel: "4090"}, []string{"a", "e"}},
		{"required model and VRAM", Job{ID: "j4", Price: big.NewInt(1), GPUModel: "3080", MinVRAM: 16384}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == nil {
				if _, err := p.Select(tc.job, []byte("s")); !errors.Is(err, ErrNoCandidates) {
					t.Fatalf("got %v, want ErrNoCandidates", err)
				}
				return
			}
			if got := keys(drawn(t, p, tc.job, 400)); !slices.Equal(got, tc.want) {
				t.Fatalf("candidates %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSelectSkipsBusyAndIsDeterministic(t *testing.T) {
	p := mustPool(t, node("a", "x", 8), node("b", "x", 8), node("c", "x", 8))
	if err := p.SetFree("b", false); err != nil {
		t.Fatal(err)
	}
	job := Job{ID: "j", Price: big.NewInt(1)}
	if got := keys(drawn(t, p, job, 200)); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("busy node drawn: %v", got)
	}
	// Same state and seed on a pool built in another order: same choice.
	q := mustPool(t, node("c", "x", 8), node("b", "x", 8), node("a", "x", 8))
	_ = q.SetFree("b", false)
	for i := range 50 {
		seed := []byte{byte(i)}
		s1, _ := p.Select(job, seed)
		s2, _ := q.Select(job, seed)
		if !slices.Equal(s1.Nodes, s2.Nodes) {
			t.Fatalf("seed %d: %v vs %v", i, s1.Nodes, s2.Nodes)
		}
	}
}

func TestLocalityNarrowing(t *testing.T) {
	with := node("has", "x", 8)
	with.LocalModels = []string{"m1", "m2"}
	partial := node("partial", "x", 8)
	partial.LocalModels = []string{"m1"}
	p := mustPool(t, with, partial, node("none", "x", 8))
	job := Job{ID: "j", Price: big.NewInt(1), Models: []string{"m1", "m2"}}
	sel, err := p.Select(job, []byte("s"))
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Narrowed || sel.Candidates != 1 || !slices.Equal(sel.Nodes, []string{"has"}) {
		t.Fatalf("narrowing: %+v", sel)
	}
	// The holder is busy: fall back to every eligible free node.
	_ = p.SetFree("has", false)
	got := drawn(t, p, job, 300)
	if !slices.Equal(keys(got), []string{"none", "partial"}) {
		t.Fatalf("fallback candidates %v", keys(got))
	}
	// partial has M = 1.35, none M = 1: partial is drawn more often.
	if got["partial"] <= got["none"] {
		t.Fatalf("locality boost not applied: %v", got)
	}
	sel, _ = p.Select(job, []byte("s"))
	if sel.Narrowed || sel.Candidates != 2 {
		t.Fatalf("fallback selection: %+v", sel)
	}
}

func TestLocalityFallbackWhenHoldersWeighNothing(t *testing.T) {
	h := node("holder", "x", 8)
	h.LocalModels = []string{"m"}
	h.QoS = 0
	p := mustPool(t, h, node("other", "x", 8))
	sel, err := p.Select(Job{ID: "j", Price: big.NewInt(1), Models: []string{"m"}}, []byte("s"))
	if err != nil {
		t.Fatal(err)
	}
	if sel.Narrowed || !slices.Equal(sel.Nodes, []string{"other"}) {
		t.Fatalf("got %+v", sel)
	}
}

func TestPreDownload(t *testing.T) {
	var nodes []Node
	for i := range 8 {
		n := node(fmt.Sprintf("n%d", i), "x", 16)
		if i == 0 {
			n.LocalModels = []string{"rare", "common"}
		}
		if i < 4 {
			n.LocalModels = append(n.LocalModels, "common")
		}
		nodes = append(nodes, n)
	}
	nodes = append(nodes, node("small", "x", 4)) // not eligible: too little VRAM
	p := mustPool(t, nodes...)
	_ = p.SetFree("n1", false) // busy nodes still count as holders and can fetch
	job := Job{ID: "j", Price: big.NewInt(1), MinVRAM: 16, Models: []string{"common", "rare"}}
	sel, err := p.Select(job, []byte("s"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.PreDownload) != 1 || sel.PreDownload[0].Model != "rare" || len(sel.PreDownload[0].Nodes) != 2 {
		t.Fatalf("pre-download: %+v", sel.PreDownload)
	}
	for _, id := range sel.PreDownload[0].Nodes {
		if id == "n0" || id == "small" {
			t.Fatalf("asked %s, which holds the model or is not eligible", id)
		}
	}
	again, _ := p.Select(job, []byte("s"))
	if !slices.Equal(again.PreDownload[0].Nodes, sel.PreDownload[0].Nodes) {
		t.Fatal("pre-download choice not deterministic")
	}
}

func TestGroupSelectionOneCardModel(t *testing.T) {
	p := mustPool(t,
		node("a1", "A", 24), node("a2", "A", 24), node("a3", "A", 32),
		node("b1", "B", 24), node("b2", "B", 24),
		node("c1", "C", 24), node("c2", "C", 24), node("c3", "C", 24), node("c4", "C", 24))
	job := Job{ID: "g", Price: big.NewInt(1), MinVRAM: 24, Replicas: 3}
	models := map[byte]int{}
	for i := range 2000 {
		sel, err := p.Select(job, []byte(fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		if len(sel.Nodes) != 3 {
			t.Fatalf("got %v", sel.Nodes)
		}
		seen := map[string]bool{}
		for _, n := range sel.Nodes {
			if n[0] != sel.Nodes[0][0] || seen[n] {
				t.Fatalf("nodes %v not distinct on one card model", sel.Nodes)
			}
			seen[n] = true
		}
		models[sel.Nodes[0][0]]++
	}
	// B has only two nodes; A and C are drawn in proportion to their
	// size (3:4), as seed 000 wants equal chances per node.
	if models['B'] != 0 {
		t.Fatalf("model B drawn %d times with 2 nodes", models['B'])
	}
	if r := float64(models['A']) / float64(models['C']); r < 0.65 || r > 0.86 {
		t.Fatalf("A:C = %d:%d, want about 3:4", models['A'], models['C'])
	}
	_ = p.SetFree("c1", false)
	_ = p.SetFree("c2", false)
	if got := keys(drawn(t, p, job, 50)); !slices.Equal(got, []string{"a1", "a2", "a3"}) {
		t.Fatalf("with C short of free nodes: %v", got)
	}
}

func TestPoolUpdateRemove(t *testing.T) {
	p := mustPool(t, node("a", "x", 8), node("b", "y", 16))
	if err := p.Add(node("a", "x", 8), true); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("duplicate add: %v", err)
	}
	if err := p.Update(node("a", "y", 16)); err != nil {
		t.Fatal(err)
	}
	if got := keys(drawn(t, p, Job{ID: "j", Price: big.NewInt(1), GPUModel: "y"}, 100)); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("after regrading: %v", got)
	}
	if err := p.Remove("b"); err != nil {
		t.Fatal(err)
	}
	if err := p.Remove("b"); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("second remove: %v", err)
	}
	if p.Len() != 1 || p.FreeLen() != 1 || len(p.order) != 1 {
		t.Fatalf("len %d free %d groups %d", p.Len(), p.FreeLen(), len(p.order))
	}
	if err := p.Add(Node{ID: "bad", QoS: 2}, true); !errors.Is(err, ErrInvalidNode) {
		t.Fatalf("bad QoS: %v", err)
	}
	if err := p.Add(Node{ID: "neg", Stake: big.NewInt(-1)}, true); !errors.Is(err, ErrInvalidNode) {
		t.Fatalf("negative stake: %v", err)
	}
}

func TestSelectFunctionRejectsBadJob(t *testing.T) {
	_, err := Select(DefaultConfig(), Job{ID: "j"}, []Node{node("a", "x", 1)}, nil)
	if !errors.Is(err, ErrInvalidJob) {
		t.Fatalf("job without price: %v", err)
	}
	_, err = Select(DefaultConfig(), Job{ID: "j", Price: big.NewInt(1), Replicas: 9}, nil, nil)
	if !errors.Is(err, ErrInvalidJob) {
		t.Fatalf("too many replicas: %v", err)
	}
}
