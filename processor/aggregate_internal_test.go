package processor

import (
	"crypto/sha256"
	"slices"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
)

func testPeers(t *testing.T, n int) []peer.ID {
	t.Helper()
	var out []peer.ID
	for range n {
		_, pub, err := crypto.GenerateEd25519Key(nil)
		if err != nil {
			t.Fatal(err)
		}
		id, err := peer.IDFromPublicKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}

// The author of the newest record writes a MacroJob's aggregate first;
// every holder computes the same order from the same records, whatever
// order it reads them in, and one that wrote none of them comes last.
func TestAggregateRankPutsTheCompleterFirst(t *testing.T) {
	id := jobs.ID(sha256.Sum256([]byte("job")))
	ps := testPeers(t, 5)
	set := []crdt.Record{
		{Key: "/a", Author: ps[0], Seq: 10},
		{Key: "/b", Author: ps[1], Seq: 30},
		{Key: "/c", Author: ps[2], Seq: 20},
		{Key: "/d", Author: ps[3], Seq: 25},
		{Key: "/e", Author: ps[0], Seq: 5},
	}
	if r := aggregateRank(id, 3, set, ps[1].String()); r != 0 {
		t.Fatalf("the completer ranks %d, want 0", r)
	}
	if r := aggregateRank(id, 3, set, ps[4].String()); r != 4 {
		t.Fatalf("a holder that wrote nothing ranks %d, want 4 (after the 4 authors)", r)
	}
	ranks := map[int]bool{}
	for _, p := range ps[:4] {
		r := aggregateRank(id, 3, set, p.String())
		reversed := slices.Clone(set)
		slices.Reverse(reversed)
		if again := aggregateRank(id, 3, reversed, p.String()); again != r {
			t.Fatalf("%s ranks %d, and %d with the records in another order", p, r, again)
		}
		ranks[r] = true
	}
	if len(ranks) != 4 {
		t.Fatalf("the 4 authors share ranks: %v", ranks)
	}
	// Another MacroJob orders the others differently (not always the
	// same peer second).
	second := map[peer.ID]bool{}
	for macro := range uint64(16) {
		for _, p := range []peer.ID{ps[0], ps[2], ps[3]} {
			if aggregateRank(id, macro, set, p.String()) == 1 {
				second[p] = true
			}
		}
	}
	if len(second) < 2 {
		t.Fatalf("the same peer is second for every MacroJob: %v", second)
	}
}
