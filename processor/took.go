package processor

import (
	"context"
	"sync"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/records"
)

// turnTook holds the took records (records.TookKey) one ownership turn
// owes: one for each MacroJob where the turn runs the first MicroJob this
// processor locked there. A took record is the evidence, signed by this
// processor under its own key, that it took work of the MacroJob: every
// reader counts a processor with that evidence and no commitment as
// assigned the task and timed out (finish.FinalRounds), whoever takes the
// MicroJobs over.
//
// A record owed goes into the store in the batch of the turn's
// commitments when the turn writes them within Config.TookGrace of
// running that first MicroJob: a processor that commits within the grace
// is a committer there, and its took record costs the mesh no message of
// its own. When the grace passes first, or the turn ends without a
// commitment, the record is written alone. A record already in the store
// (written before a restart) is left as it is, so its seq stays the
// earliest.
type turnTook struct {
	w   *Worker
	js  *jobState
	ctx context.Context

	mu    sync.Mutex
	owed  []uint64    // MacroJobs whose record waits for the batch
	timer *time.Timer // writes what is owed alone once the grace passes
	late  bool        // the grace has passed: records are written at once
}

// tookTurn starts the took records of one turn of js.
func (w *Worker) tookTurn(ctx context.Context, js *jobState) *turnTook {
	return &turnTook{w: w, js: js, ctx: ctx}
}

// add notes that the turn is about to run a MicroJob of MacroJob macro.
func (t *turnTook) add(macro uint64) {
	if t.w.p.Store == nil || t.done(macro) {
		return
	}
	t.mu.Lock()
	for _, m := range t.owed {
		if m == macro {
			t.mu.Unlock()
			return
		}
	}
	if t.late || t.w.cfg.TookGrace <= 0 {
		t.mu.Unlock()
		t.write([]uint64{macro})
		return
	}
	t.owed = append(t.owed, macro)
	if t.timer == nil {
		t.timer = time.AfterFunc(t.w.cfg.TookGrace, t.lapse)
	}
	t.mu.Unlock()
}

// lapse writes what is owed alone: the grace passed before the turn's
// commitments.
func (t *turnTook) lapse() {
	t.mu.Lock()
	t.late = true
	owed := t.owed
	t.owed = nil
	t.mu.Unlock()
	t.write(owed)
}

// take stops the grace and returns what is still owed.
func (t *turnTook) take() []uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timer != nil {
		t.timer.Stop()
	}
	owed := t.owed
	t.owed = nil
	return owed
}

// claim takes the records still owed into the batch of the turn's
// commitments: their MacroJobs and entries. A nil turnTook owes none.
func (t *turnTook) claim() ([]uint64, []crdt.Entry) {
	if t == nil {
		return nil, nil
	}
	var macros []uint64
	var entries []crdt.Entry
	for _, m := range t.take() {
		key, ok := t.stored(m)
		if ok {
			continue
		}
		macros = append(macros, m)
		entries = append(entries, crdt.Entry{Key: key, Type: records.TookType})
	}
	return macros, entries
}

// wrote marks the records of macros written (claimed into a batch that
// was written). A nil turnTook does nothing.
func (t *turnTook) wrote(macros []uint64) {
	if t == nil {
		return
	}
	for _, m := range macros {
		t.mark(m)
	}
}

// end writes alone what the turn still owes: it wrote no commitment, or
// not the one these records waited for.
func (t *turnTook) end() {
	t.write(t.take())
}

// write writes the records of macros, one at a time; none once the job
// has a verdict here: like a turn's commitments then (finishTurn), a late
// took record would change the rounds every node has judged.
func (t *turnTook) write(macros []uint64) {
	w, js := t.w, t.js
	w.mu.Lock()
	over := js.finished
	w.mu.Unlock()
	if over {
		return
	}
	for _, m := range macros {
		if t.done(m) {
			continue
		}
		key, ok := t.stored(m)
		if ok {
			continue
		}
		if err := w.p.Store.Put(t.ctx, key, records.TookType, nil); err != nil {
			w.log.Warn("writing a took record", "job", js.plan().JobID, "macro", m, "err", err)
			continue
		}
		t.mark(m)
	}
}

// stored returns the key of this node's took record of macro and whether
// the store holds it already (written before a restart, which forgets
// what it wrote), marking it written then.
func (t *turnTook) stored(macro uint64) (string, bool) {
	key := records.TookKey(t.js.plan().JobID, macro, t.w.self)
	if _, err := t.w.p.Store.Get(t.ctx, key); err != nil {
		return key, false
	}
	t.mark(macro)
	return key, true
}

// done reports whether this node's took record of macro is written.
func (t *turnTook) done(macro uint64) bool {
	t.w.mu.Lock()
	defer t.w.mu.Unlock()
	return t.js.took[macro]
}

// mark notes this node's took record of macro written.
func (t *turnTook) mark(macro uint64) {
	t.w.mu.Lock()
	defer t.w.mu.Unlock()
	if t.js.took == nil {
		t.js.took = map[uint64]bool{}
	}
	t.js.took[macro] = true
}
