package dispatch

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"testing"
)

func preDownloadNodes() []Node {
	var nodes []Node
	for i := range 8 {
		n := node(fmt.Sprintf("n%d", i), "x", 16)
		if i == 0 {
			n.LocalModels = []string{"rare"}
		}
		if i < 4 {
			n.LocalModels = append(n.LocalModels, "common")
		}
		nodes = append(nodes, n)
	}
	return append(nodes, node("small", "x", 4), node("other", "y", 16))
}

func TestPreDownloadsMatchesSelect(t *testing.T) {
	nodes := preDownloadNodes()
	job := Job{ID: "j", Price: big.NewInt(1), MinVRAM: 16, GPUModel: "x", Models: []string{"rare", "common", "rare"}}
	for _, seed := range []string{"a", "b", "c", "d"} {
		got, err := PreDownloads(DefaultConfig(), job, nodes, []byte(seed))
		if err != nil {
			t.Fatal(err)
		}
		sel, err := Select(DefaultConfig(), job, nodes, []byte(seed))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Model != "rare" || len(got[0].Nodes) != 2 {
			t.Fatalf("seed %s: %+v", seed, got)
		}
		if !slices.Equal(got[0].Nodes, sel.PreDownload[0].Nodes) {
			t.Fatalf("seed %s: PreDownloads %v, Select %v", seed, got[0].Nodes, sel.PreDownload[0].Nodes)
		}
		for _, id := range got[0].Nodes {
			if id == "n0" || id == "small" || id == "other" {
				t.Fatalf("seed %s named %s: a holder or not eligible", seed, id)
			}
		}
		// The order of the input does not matter.
		rev := slices.Clone(nodes)
		slices.Reverse(rev)
		again, err := PreDownloads(DefaultConfig(), job, rev, []byte(seed))
		if err != nil || !slices.EqualFunc(again, got, func(a, b PreDownload) bool { return a.Model == b.Model && slices.Equal(a.Nodes, b.Nodes) }) {
			t.Fatalf("seed %s: reversed input gives %+v, %v", seed, again, err)
		}
	}
}

func TestPreDownloadsEdges(t *testing.T) {
	nodes := preDownloadNodes()
	// Enough holders, or no model: nobody is asked.
	for _, models := range [][]string{nil, {"common"}} {
		got, err := PreDownloads(DefaultConfig(), Job{ID: "j", Price: big.NewInt(1), Models: models}, nodes, []byte("s"))
		if err != nil || len(got) != 0 {
			t.Fatalf("models %v: %+v, %v", models, got, err)
		}
	}
	// Fewer eligible non-holders than missing holders: all of them.
	few := []Node{node("a", "x", 8), node("b", "x", 8)}
	got, err := PreDownloads(DefaultConfig(), Job{ID: "j", Price: big.NewInt(1), Models: []string{"m"}}, few, []byte("s"))
	if err != nil || len(got) != 1 || len(got[0].Nodes) != 2 {
		t.Fatalf("few: %+v, %v", got, err)
	}
	// A node that weighs 0 (QoS 0: kicked out) is never asked.
	few[1].QoS = 0
	got, err = PreDownloads(DefaultConfig(), Job{ID: "j", Price: big.NewInt(1), Models: []string{"m"}}, few, []byte("s"))
	if err != nil || len(got) != 1 || !slices.Equal(got[0].Nodes, []string{"a"}) {
		t.Fatalf("zero weight: %+v, %v", got, err)
	}
	// MinModelHolders 0 turns pre-download off.
	cfg := DefaultConfig()
	cfg.MinModelHolders = 0
	if got, err := PreDownloads(cfg, Job{ID: "j", Models: []string{"m"}}, few, nil); err != nil || got != nil {
		t.Fatalf("off: %+v, %v", got, err)
	}
	if _, err := PreDownloads(DefaultConfig(), Job{ID: "j"}, []Node{{}}, nil); !errors.Is(err, ErrInvalidNode) {
		t.Fatalf("bad node: %v", err)
	}
	if _, err := PreDownloads(DefaultConfig(), Job{ID: "j", Models: make([]string, MaxModels+1)}, nil, nil); !errors.Is(err, ErrInvalidJob) {
		t.Fatalf("too many models: %v", err)
	}
}

func TestHoldsModels(t *testing.T) {
	n := Node{ID: "a", LocalModels: []string{"m1", "m2"}}
	for _, c := range []struct {
		models []string
		want   bool
	}{{nil, true}, {[]string{"m1"}, true}, {[]string{"m2", "m1", "m1"}, true}, {[]string{"m1", "m3"}, false}} {
		if got := HoldsModels(Job{Models: c.models}, n); got != c.want {
			t.Errorf("%v: %v", c.models, got)
		}
	}
}
