package processor

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/disclosure"
	"github.com/jobmesh/jobmesh/internal/jobtest"
	"github.com/jobmesh/jobmesh/jobindex"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// discloseFixture is a worker on a one-replica store following a job of
// two MacroJobs (two regular MicroJobs and a verifier each), and a disclosure (with its commitment entry) by this
// worker for each MicroJob of the plan.
type discloseFixture struct {
	w       *Worker
	js      *jobState
	store   *crdt.Store
	discl   map[jobs.ID]microjob.Disclosure
	commits map[jobs.ID]crdt.Entry
}

func newDiscloseFixture(t *testing.T, poll time.Duration) *discloseFixture {
	t.Helper()
	plan := roundsPlan(t)
	c := crdttest.New(t, crdttest.Options{Replicas: 1})
	r := c.Replicas[0]
	x := jobindex.New(r.Store)
	js := (&jobState{info: jobtest.Info(1)}).withPlan(plan)
	w := &Worker{
		self: r.ID().String(), cfg: Config{Poll: poll},
		writer: x.Writer(), index: x,
		known: map[jobs.ID]*jobState{plan.JobID: js}, rooms: map[macrojob.RoomID]*macrojob.Room{},
		log: slog.New(slog.DiscardHandler), m: newMetrics(nil), discl: disclosure.Pending{Hold: poll},
	}
	f := &discloseFixture{w: w, js: js, store: r.Store, discl: map[jobs.ID]microjob.Disclosure{}, commits: map[jobs.ID]crdt.Entry{}}
	mh, err := multihash.Sum([]byte("result"), multihash.SHA2_256, -1)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range plan.Macros {
		for _, mu := range m.Micros {
			d := microjob.Disclosure{
				Version: microjob.RecordVersion, JobID: plan.JobID, MacroIndex: m.Index, MicroID: mu.ID,
				Processor: w.self, Wallet: "0x00000000000000000000000000000000000000aa",
				BlockIndices: mu.Blocks, ResultCID: cid.NewCidV1(cid.Raw, mh), Salt: sha256.Sum256([]byte(mu.ID.String())),
			}
			for range mu.Blocks {
				d.BlockHashes = append(d.BlockHashes, sha256.Sum256([]byte("out")))
			}
			c, err := d.Commitment()
			if err != nil {
				t.Fatal(err)
			}
			f.discl[mu.ID] = d
			f.commits[mu.ID] = crdt.Entry{Key: records.CommitmentKey(c), Type: records.CommitType, Payload: c.Encode()}
		}
	}
	return f
}

// commit writes the commitments of MacroJob m's MicroJobs as one turn
// whose results were not its own would (they are not offered to
// commitTurn), and keeps their disclosures pending.
func (f *discloseFixture) commit(t *testing.T, m int) {
	t.Helper()
	var entries []crdt.Entry
	for _, mu := range f.js.plan().Macros[m].Micros {
		entries = append(entries, f.commits[mu.ID])
	}
	if _, ok := f.w.commitTurn(context.Background(), f.js, entries, nil, nil); !ok {
		t.Fatalf("MacroJob %d: commitments not written", m)
	}
	for _, mu := range f.js.plan().Macros[m].Micros {
		f.w.discl.Add(f.discl[mu.ID])
	}
}

// turn writes the commitments of MacroJob m's MicroJobs at slots as one
// turn that ran them does (commitTurn with their disclosures), and keeps
// the disclosures it did not write pending, as finishTurn does.
func (f *discloseFixture) turn(t *testing.T, m int, slots ...int) {
	t.Helper()
	var entries []crdt.Entry
	var ran []microjob.Disclosure
	for _, k := range slots {
		mu := f.js.plan().Macros[m].Micros[k]
		entries = append(entries, f.commits[mu.ID])
		ran = append(ran, f.discl[mu.ID])
	}
	later, ok := f.w.commitTurn(context.Background(), f.js, entries, ran, nil)
	if !ok {
		t.Fatalf("MacroJob %d: commitments not written", m)
	}
	f.w.discl.Add(later...)
}

// TestTurnThatCompletesItsMacroJobDiscloses: the turn whose commitments
// give its MacroJob's last MicroJob a commitment writes, in the same store
// batch, the MacroJob's disclosures: its own and those pending from earlier
// turns. A turn that leaves the MacroJob short keeps its disclosures
// pending, and writes none of another MacroJob's that is not complete.
func TestTurnThatCompletesItsMacroJobDiscloses(t *testing.T) {
	f := newDiscloseFixture(t, time.Hour)
	n0 := len(f.js.plan().Macros[0].Micros)
	if n0 < 2 {
		t.Fatalf("MacroJob 0 has %d MicroJobs", n0)
	}
	f.turn(t, 0, 0) // one of n0: not complete
	if n := f.disclosed(t, 0); n != 0 {
		t.Fatalf("%d disclosures written before MacroJob 0 was fully committed", n)
	}
	if n := f.pending(); n != 1 {
		t.Fatalf("%d pending after the first turn, want 1", n)
	}
	f.turn(t, 1, 0) // another MacroJob, not complete either
	rest := make([]int, 0, n0-1)
	for k := 1; k < n0; k++ {
		rest = append(rest, k)
	}
	f.turn(t, 0, rest...) // completes MacroJob 0
	if n := f.disclosed(t, 0); n != n0 {
		t.Fatalf("%d of MacroJob 0's disclosures written with its last commitments, want %d", n, n0)
	}
	if n := f.disclosed(t, 1); n != 0 {
		t.Fatalf("%d of MacroJob 1's disclosures written, want none (it is not fully committed)", n)
	}
	if n := f.pending(); n != 1 {
		t.Fatalf("%d pending, want MacroJob 1's one", n)
	}
	// The disclosures match the commitments written with them.
	for _, mu := range f.js.plan().Macros[0].Micros {
		if _, err := f.store.Get(context.Background(), f.commits[mu.ID].Key); err != nil {
			t.Fatalf("commitment of %s: %v", mu.ID, err)
		}
	}
}

// disclosed reports how many of MacroJob m's disclosures the store holds.
func (f *discloseFixture) disclosed(t *testing.T, m int) int {
	t.Helper()
	n := 0
	for _, mu := range f.js.plan().Macros[m].Micros {
		_, err := f.store.Get(context.Background(), records.DisclosureKey(f.discl[mu.ID]))
		switch {
		case err == nil:
			n++
		case !errors.Is(err, crdt.ErrNotFound):
			t.Fatal(err)
		}
	}
	return n
}

func (f *discloseFixture) pending() int { return f.w.discl.Len() }

// TestTurnCarriesDueDisclosures: while a turn runs, a disclosure that
// became due is held, and the turn's commitments take it along in their
// store batch; nothing is lost or written twice.
func TestTurnCarriesDueDisclosures(t *testing.T) {
	f := newDiscloseFixture(t, time.Hour)
	ctx := context.Background()
	f.commit(t, 0) // MacroJob 0 is fully committed: its disclosures are due
	n0, n1 := len(f.js.plan().Macros[0].Micros), len(f.js.plan().Macros[1].Micros)
	f.w.discl.StartTurn(time.Now(), 0, 0)
	f.w.disclose(ctx)
	if n := f.disclosed(t, 0); n != 0 {
		t.Fatalf("%d disclosures written while a turn runs, want them held", n)
	}
	if n := f.pending(); n != n0 {
		t.Fatalf("%d pending, want the %d held", n, n0)
	}
	f.commit(t, 1) // the running turn's commitments carry them
	if f.w.discl.EndTurn() {
		t.Fatal("hold times left for written disclosures")
	}
	if n := f.disclosed(t, 0); n != n0 {
		t.Fatalf("%d of MacroJob 0's disclosures written with the next turn's commitments, want %d", n, n0)
	}
	if n := f.pending(); n != n1 {
		t.Fatalf("%d pending, want MacroJob 1's %d", n, n1)
	}
	// No turn now: the settle loop writes what is due at once.
	f.w.disclose(ctx)
	if n := f.disclosed(t, 1); n != n1 {
		t.Fatalf("%d of MacroJob 1's disclosures written by an idle worker, want %d", n, n1)
	}
	if n := f.pending(); n != 0 {
		t.Fatalf("%d pending after all were written", n)
	}
}
