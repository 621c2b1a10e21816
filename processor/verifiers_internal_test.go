package processor

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/meshview"
	"github.com/jobmesh/jobmesh/records"
)

// TestVerifierRanksFollowLateCommitments: a commitment of a MicroJob that
// a verifier checks, stored after the ranks were first derived (a
// duplicate run's), moves its author behind the processors that ran none,
// as every processor that has it ranks them: the ranks are not kept from
// before it.
func TestVerifierRanksFollowLateCommitments(t *testing.T) {
	ctx := context.Background()
	f := newDiscloseFixture(t, time.Hour)
	w, js := f.w, f.js
	// Processors enough that one outranks this one as MacroJob 0's
	// first owner, who ranks last of those that ran nothing.
	id, self := js.plan().JobID.String(), w.self
	mine := records.RankHash(self, id, "0")
	ads := []meshview.Advertised{{PeerID: self}}
	for i := 1; ; i++ {
		p := fmt.Sprintf("p%d", i)
		ads = append(ads, meshview.Advertised{PeerID: p})
		if h := records.RankHash(p, id, "0"); len(ads) >= 4 && bytes.Compare(h[:], mine[:]) > 0 {
			break
		}
	}
	w.dview.Store(modelView(t, ads))

	before := w.verifierRanks(ctx, js)
	if len(before) != len(js.plan().Macros) {
		t.Fatalf("ranks for %d MacroJobs, want %d", len(before), len(js.plan().Macros))
	}
	if k := slices.Index(before[0], self); k < 0 || k == len(ads)-1 {
		t.Fatalf("before any commitment this processor ranks %d of %d for MacroJob 0: %v", k, len(ads), before[0])
	}

	src := js.plan().Macros[0].Micros[js.plan().Macros[0].Verifier().Sources[0].Slot].ID
	if _, ok := w.commitTurn(ctx, js, []crdt.Entry{f.commits[src]}, nil, nil); !ok {
		t.Fatal("commitment not written")
	}
	after := w.verifierRanks(ctx, js)
	if got := after[0][len(after[0])-1]; got != self {
		t.Fatalf("after it committed a checked MicroJob this processor is not last for MacroJob 0's verifier: %v", after[0])
	}
	if !slices.Equal(after[1], before[1]) {
		t.Fatalf("MacroJob 1's verifier ranks changed with a commitment in MacroJob 0: %v, then %v", before[1], after[1])
	}
}
