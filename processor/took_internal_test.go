package processor

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/records"
)

// countingStore counts the records written alone (Put) to a store.
type countingStore struct {
	crdt.Replicated
	puts atomic.Int64
}

func (s *countingStore) Put(ctx context.Context, key, recordType string, payload []byte) error {
	s.puts.Add(1)
	return s.Replicated.Put(ctx, key, recordType, payload)
}

// newTookFixture is the disclosure fixture with a took grace and its
// store's lone writes counted.
func newTookFixture(t *testing.T, grace time.Duration) (*discloseFixture, *countingStore) {
	t.Helper()
	f := newDiscloseFixture(t, time.Hour)
	cs := &countingStore{Replicated: f.store}
	f.w.p.Store = cs
	f.w.cfg.TookGrace = grace
	return f, cs
}

// tookSeq returns the seq of this worker's took record of MacroJob m, or
// fails the test when there is none.
func (f *discloseFixture) tookSeq(t *testing.T, m uint64) uint64 {
	t.Helper()
	r, err := f.store.Get(context.Background(), records.TookKey(f.js.plan().JobID, m, f.w.self))
	if err != nil {
		t.Fatalf("no took record of MacroJob %d: %v", m, err)
	}
	if r.Type != records.TookType || len(r.Payload) != 0 {
		t.Fatalf("took record of MacroJob %d: type %q, %d payload bytes", m, r.Type, len(r.Payload))
	}
	return r.Seq
}

// commitWith writes the commitment of MacroJob m's first MicroJob as the
// turn's batch, with the took records the turn still owes.
func (f *discloseFixture) commitWith(t *testing.T, m int, took *turnTook) {
	t.Helper()
	mu := f.js.plan().Macros[m].Micros[0]
	if _, ok := f.w.commitTurn(context.Background(), f.js, []crdt.Entry{f.commits[mu.ID]}, nil, took); !ok {
		t.Fatalf("MacroJob %d: commitment not written", m)
	}
}

// TestTookRecordRidesWithTheTurnsCommitments: a turn that commits within
// the grace writes its took records in its commitments' batch, none
// alone; once per MacroJob, however many turns run there.
func TestTookRecordRidesWithTheTurnsCommitments(t *testing.T) {
	f, cs := newTookFixture(t, time.Hour)
	took := f.w.tookTurn(context.Background(), f.js)
	took.add(0)
	took.add(0)
	took.add(1)
	f.commitWith(t, 0, took)
	took.end()
	if n := cs.puts.Load(); n != 0 {
		t.Fatalf("%d records written alone, want none: the took records ride with the commitments", n)
	}
	f.tookSeq(t, 0)
	f.tookSeq(t, 1)
	// A later turn in the same MacroJobs owes nothing.
	again := f.w.tookTurn(context.Background(), f.js)
	again.add(0)
	again.add(1)
	if macros, entries := again.claim(); len(macros) != 0 || len(entries) != 0 {
		t.Fatalf("a later turn owes took records of %v", macros)
	}
	again.end()
	if n := cs.puts.Load(); n != 0 {
		t.Fatalf("%d records written alone by a later turn", n)
	}
}

// TestTookRecordWrittenAloneWhenTheGraceLapses: when the grace passes
// before the turn's commitments, the took record is written alone at
// once, and so is every later one of the turn; the commitments' batch
// then carries none.
func TestTookRecordWrittenAloneWhenTheGraceLapses(t *testing.T) {
	f, cs := newTookFixture(t, time.Hour)
	took := f.w.tookTurn(context.Background(), f.js)
	took.add(0)
	if n := cs.puts.Load(); n != 0 {
		t.Fatalf("%d records written before the grace passed", n)
	}
	took.lapse() // what the grace's timer calls
	if n := cs.puts.Load(); n != 1 {
		t.Fatalf("%d records written alone when the grace passed, want 1", n)
	}
	seq := f.tookSeq(t, 0)
	took.add(1) // after the grace: at once
	if n := cs.puts.Load(); n != 2 {
		t.Fatalf("%d records written alone, want 2: a MacroJob taken after the grace is written at once", n)
	}
	if macros, _ := took.claim(); len(macros) != 0 {
		t.Fatalf("the batch would carry took records of %v, already written", macros)
	}
	f.commitWith(t, 0, took)
	took.end()
	if got := f.tookSeq(t, 0); got != seq {
		t.Fatalf("took record of MacroJob 0 rewritten: seq %d, then %d", seq, got)
	}
	f.tookSeq(t, 1)
}

// TestTookRecordWrittenWhenTheTurnCommitsNothing: a turn that ends
// without a commitment (its run failed, it was stopped) still leaves the
// evidence that it took work, written alone; with no grace it is written
// before the run.
func TestTookRecordWrittenWhenTheTurnCommitsNothing(t *testing.T) {
	f, cs := newTookFixture(t, time.Hour)
	took := f.w.tookTurn(context.Background(), f.js)
	took.add(0)
	took.end()
	if n := cs.puts.Load(); n != 1 {
		t.Fatalf("%d records written alone by a turn without commitments, want 1", n)
	}
	f.tookSeq(t, 0)

	f.w.cfg.TookGrace = 0
	now := f.w.tookTurn(context.Background(), f.js)
	now.add(1)
	if n := cs.puts.Load(); n != 2 {
		t.Fatalf("%d records written alone with no grace, want 2: written at add", n)
	}
	f.tookSeq(t, 1)
	now.end()
}

// TestTookRecordKeptFromBeforeARestart: a took record already in the
// store (written before a restart, which forgets what it wrote) is not
// written again, in a batch or alone, so its seq stays the earliest.
func TestTookRecordKeptFromBeforeARestart(t *testing.T) {
	f, cs := newTookFixture(t, time.Hour)
	ctx := context.Background()
	for m := range uint64(2) {
		if err := f.store.Put(ctx, records.TookKey(f.js.plan().JobID, m, f.w.self), records.TookType, nil); err != nil {
			t.Fatal(err)
		}
	}
	seq0, seq1 := f.tookSeq(t, 0), f.tookSeq(t, 1)
	took := f.w.tookTurn(ctx, f.js)
	took.add(0)
	f.commitWith(t, 0, took)
	took.add(1)
	took.end()
	if n := cs.puts.Load(); n != 0 {
		t.Fatalf("%d records written alone, want none", n)
	}
	if a, b := f.tookSeq(t, 0), f.tookSeq(t, 1); a != seq0 || b != seq1 {
		t.Fatalf("took records rewritten: seqs %d, %d, then %d, %d", seq0, seq1, a, b)
	}
}

// TestTookRecordNotWrittenAfterAVerdict: a turn still owing its took
// record when the job gets a verdict writes it neither when the grace
// passes nor when it ends, as it writes no commitment then: a late took
// record would change the rounds every node has judged.
func TestTookRecordNotWrittenAfterAVerdict(t *testing.T) {
	f, cs := newTookFixture(t, time.Hour)
	took := f.w.tookTurn(context.Background(), f.js)
	took.add(0)
	f.w.mu.Lock()
	f.js.finished = true
	f.w.mu.Unlock()
	took.lapse() // the grace passes: what is owed is not written
	took.add(1)  // after the grace: not written at once either
	took.end()
	if n := cs.puts.Load(); n != 0 {
		t.Fatalf("%d took records written after the verdict", n)
	}
	for m := range uint64(2) {
		if _, err := f.store.Get(context.Background(), records.TookKey(f.js.plan().JobID, m, f.w.self)); err == nil {
			t.Fatalf("took record of MacroJob %d written after the verdict", m)
		}
	}
}
