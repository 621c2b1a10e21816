package processor

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// The record index keeps, for each job the worker follows, the job's
// records opened and checked once each, fed by one watch on /jobs. Reading
// a job's records is then a lookup instead of a query that decodes and
// verifies every record again: the worker reads them on every step, and a
// query per step made a job cost O(MicroJobs²) per processor.
//
// Consistency: a job's index is loaded with one Query; changes the watch
// delivers while it loads are replayed on top, in order, so nothing
// written after the watch started is missed. If the watch overflows, every
// index is marked stale and reloads on its next read. The worker's own
// writes are applied at once (indexWriter), so a step sees what the
// previous step wrote.

// recordIndex is the worker's per-job record index.
type recordIndex struct {
	store *crdt.Store

	mu   sync.Mutex
	jobs map[jobs.ID]*jobIndex
	// changed is signalled (without blocking) after any index changed;
	// onChange, when set, is called too.
	changed  chan struct{}
	onChange func()
}

// jobIndex is one job's records by key.
type jobIndex struct {
	id      jobs.ID
	loaded  bool          // entries reflect a query plus the changes since
	loading bool          // a query is under way; changes go to buffered
	buf     []crdt.Change // changes seen while loading
	entries map[string]finish.Part
	version uint64 // bumped on every change
	snap    *finish.Records
	snapVer uint64
	// disclosed counts, by MicroJob, the valid disclosures held.
	disclosed map[jobs.ID]int
	// committers counts, by MicroJob and processor, the valid commitments
	// held, so that "is it committed, and by whom" costs no rebuild.
	committers map[jobs.ID]map[string]int
	// reqVersion is bumped whenever a dispute, self-check, redo or re-run
	// record changes (and on a load): passes over the requests are due
	// then, not on every commitment or disclosure.
	reqVersion uint64
	// requests counts the dispute, self-check and redo records held: work
	// asked of some processor beyond the queues.
	requests int
	// judgeVer is bumped whenever a record a judgement or a verdict's
	// agreement reads changes (not on settlement or redo records).
	judgeVer uint64
	// verdicts counts the verdict records held.
	verdicts int
	// heard is, by author, when this node last saw a new record of the
	// job from that processor (for those in the load, the load's time):
	// a processor still writing is alive, however far behind its view
	// of the store is.
	heard map[string]time.Time
}

func newRecordIndex(store *crdt.Store) *recordIndex {
	return &recordIndex{store: store, jobs: map[jobs.ID]*jobIndex{}, changed: make(chan struct{}, 1)}
}

func (x *recordIndex) signal() {
	select {
	case x.changed <- struct{}{}:
	default:
	}
	if x.onChange != nil {
		x.onChange()
	}
}

// run feeds the index from the store until ctx ends or the store closes.
// onRecord is called with the records of the noticed types.
func (x *recordIndex) run(changes <-chan crdt.Change, onRecord func(crdt.Record), onOverflow func()) {
	for c := range changes {
		if c.Kind == crdt.ChangeOverflow {
			if onOverflow != nil {
				onOverflow() // records were missed, onRecord's among them
			}
			x.mu.Lock()
			for _, ji := range x.jobs {
				if !ji.loading {
					ji.loaded = false
				}
				ji.buf = append(ji.buf, c) // a loading index reloads too
			}
			x.mu.Unlock()
			x.signal()
			continue
		}
		if c.Kind == crdt.ChangePut && onRecord != nil && noticed[c.Record.Type] {
			onRecord(c.Record)
		}
		x.apply(c)
	}
}

// noticed are the record types the index passes to its onRecord callback:
// jobs (discovery without a query), and requests for work outside the
// queues (disputes, self-checks, redos).
var noticed = map[string]bool{records.JobType: true, records.DisputeType: true, records.CheckType: true, records.RedoType: true}

// apply routes one change under a job to its job's index (the job's own
// record is not among the records it indexes).
func (x *recordIndex) apply(c crdt.Change) {
	id, ok := records.JobOf(c.Key)
	if !ok || c.Key == records.JobKey(id) {
		return
	}
	x.mu.Lock()
	ji := x.jobs[id]
	switch {
	case ji == nil || (!ji.loaded && !ji.loading):
		// Not followed, or stale: its next read reloads it.
	case ji.loading:
		ji.buf = append(ji.buf, c)
	default:
		ji.change(c)
	}
	x.mu.Unlock()
	x.signal()
}

func (ji *jobIndex) change(c crdt.Change) {
	switch c.Kind {
	case crdt.ChangePut:
		if old, ok := ji.entries[c.Key]; ok && old.Rec.Seq == c.Record.Seq && old.Rec.Author == c.Record.Author {
			return // already held (the worker's own write, applied at once)
		}
		ji.count(c.Key, -1)
		p := finish.OpenPart(ji.id, c.Record)
		if old, ok := ji.entries[c.Key]; p.Judged() || ok && old.Judged() {
			ji.judgeVer++
		}
		ji.entries[c.Key] = p
		ji.count(c.Key, +1)
		if ji.heard == nil {
			ji.heard = map[string]time.Time{}
		}
		ji.heard[c.Record.Author.String()] = time.Now()
	case crdt.ChangeDelete:
		if old, ok := ji.entries[c.Key]; ok && old.Judged() {
			ji.judgeVer++
		}
		ji.count(c.Key, -1)
		delete(ji.entries, c.Key)
	case crdt.ChangeOverflow:
		ji.loaded = false
		return
	}
	ji.version++
}

// count keeps the per-MicroJob disclosure and commitment counters in
// step with entries.
func (ji *jobIndex) count(key string, delta int) {
	p, ok := ji.entries[key]
	switch {
	case !ok:
	case p.Verdict:
		ji.verdicts += delta
	case p.Request != nil:
		ji.requests += delta
		ji.reqVersion++
	case p.Rerun != nil:
		ji.reqVersion++
	case p.Discl != nil:
		m := p.Discl.MicroID
		ji.disclosed[m] += delta
		if ji.disclosed[m] <= 0 {
			delete(ji.disclosed, m)
		}
	case p.Commit != nil:
		m, who := p.Commit.MicroID, p.Commit.Processor
		if ji.committers[m] == nil {
			ji.committers[m] = map[string]int{}
		}
		ji.committers[m][who] += delta
		if ji.committers[m][who] <= 0 {
			delete(ji.committers[m], who)
			if len(ji.committers[m]) == 0 {
				delete(ji.committers, m)
			}
		}
	}
}

// committed returns the MicroJobs of job id that have at least one
// commitment, from the counters when the index is loaded.
func (x *recordIndex) committed(ctx context.Context, id jobs.ID) (map[jobs.ID]bool, error) {
	x.mu.Lock()
	if ji := x.jobs[id]; ji != nil && ji.loaded {
		out := make(map[jobs.ID]bool, len(ji.committers))
		for m := range ji.committers {
			out[m] = true
		}
		x.mu.Unlock()
		return out, nil
	}
	x.mu.Unlock()
	recs, err := x.records(ctx, id)
	if err != nil {
		return nil, err
	}
	out := map[jobs.ID]bool{}
	for _, c := range recs.Commits {
		out[c.MicroID] = true
	}
	return out, nil
}

// macroCommitted reports whether every MicroJob of MacroJob m of job id
// has a commitment in the store or in also (commitments about to be
// written), without copying the index as committed does.
func (x *recordIndex) macroCommitted(ctx context.Context, id jobs.ID, m *jobs.MacroJob, also map[jobs.ID]bool) (bool, error) {
	x.mu.Lock()
	if ji := x.jobs[id]; ji != nil && ji.loaded {
		defer x.mu.Unlock()
		for _, mu := range m.Micros {
			if len(ji.committers[mu.ID]) == 0 && !also[mu.ID] {
				return false, nil
			}
		}
		return true, nil
	}
	x.mu.Unlock()
	done, err := x.committed(ctx, id)
	if err != nil {
		return false, err
	}
	for mid := range also {
		done[mid] = true
	}
	return all(m, done), nil
}

// mayRequest reports whether job id may hold dispute, self-check or redo
// records: false only when its loaded index holds none.
func (x *recordIndex) mayRequest(id jobs.ID) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	ji := x.jobs[id]
	return ji == nil || !ji.loaded || ji.requests > 0
}

// committedByOther reports whether a processor other than self has a
// commitment of MicroJob mid of job id.
func (x *recordIndex) committedByOther(ctx context.Context, id, mid jobs.ID, self string) (bool, error) {
	x.mu.Lock()
	if ji := x.jobs[id]; ji != nil && ji.loaded {
		cs := ji.committers[mid]
		_, mine := cs[self]
		x.mu.Unlock()
		if mine {
			return len(cs) > 1, nil
		}
		return len(cs) > 0, nil
	}
	x.mu.Unlock()
	recs, err := x.records(ctx, id)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(recs.Commits, func(c microjob.Commitment) bool {
		return c.MicroID == mid && c.Processor != self
	}), nil
}

// records returns job id's records, loading the index when it is new or
// stale. The result is shared: callers must not modify it.
func (x *recordIndex) records(ctx context.Context, id jobs.ID) (*finish.Records, error) {
	for {
		x.mu.Lock()
		ji := x.jobs[id]
		if ji == nil {
			ji = &jobIndex{id: id}
			x.jobs[id] = ji
		}
		if ji.loaded {
			if ji.snap == nil || ji.snapVer != ji.version {
				ji.snap, ji.snapVer = ji.build(), ji.version
			}
			s := ji.snap
			x.mu.Unlock()
			return s, nil
		}
		if ji.loading {
			// Another goroutine loads it; read it the old way meanwhile.
			x.mu.Unlock()
			return x.query(ctx, id)
		}
		ji.loading, ji.buf = true, nil
		x.mu.Unlock()

		recs, err := x.store.Query(ctx, records.JobKey(id)+"/")

		x.mu.Lock()
		ji.loading = false
		if err != nil {
			x.mu.Unlock()
			return nil, err
		}
		ji.entries = make(map[string]finish.Part, len(recs))
		ji.disclosed = map[jobs.ID]int{}
		ji.committers = map[jobs.ID]map[string]int{}
		ji.requests, ji.verdicts = 0, 0
		heard := ji.heard
		ji.heard = make(map[string]time.Time, len(heard))
		now := time.Now()
		for _, r := range recs {
			ji.entries[r.Key] = finish.OpenPart(id, r)
			ji.count(r.Key, +1)
			a := r.Author.String()
			if at, ok := heard[a]; ok {
				ji.heard[a] = at
			} else {
				ji.heard[a] = now
			}
		}
		ji.loaded = true
		ji.version++
		ji.reqVersion++
		ji.judgeVer++
		buf := ji.buf
		ji.buf = nil
		for _, c := range buf {
			ji.change(c)
		}
		x.mu.Unlock()
		// An overflow while loading left it stale: load again.
	}
}

// query reads a job's records without the index.
func (x *recordIndex) query(ctx context.Context, id jobs.ID) (*finish.Records, error) {
	recs, err := x.store.Query(ctx, records.JobKey(id)+"/")
	if err != nil {
		return nil, err
	}
	out := finish.NewRecords()
	for _, r := range recs {
		out.Add(id, finish.OpenPart(id, r))
	}
	return out, nil
}

// disclosedAll reports whether every MicroJob of plan has at least one
// disclosure in the index (false when the index is not loaded).
func (x *recordIndex) disclosedAll(id jobs.ID, plan *jobs.Plan) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	ji := x.jobs[id]
	return ji != nil && ji.loaded && len(ji.disclosed) >= plan.NumMicroJobs()
}

// version returns a number that changes whenever job id's index does.
func (x *recordIndex) version(id jobs.ID) uint64 {
	return x.loadedValue(id, func(ji *jobIndex) uint64 { return ji.version })
}

// inputsVersion returns a number that changes whenever what judging job
// id reads does: its records (index.version), and the wallet bindings and
// escrow memberships that decide which disclosures count. A disclosure
// that came before its processor's binding counts once the binding does;
// 0 while the job's index is not loaded.
func (w *Worker) inputsVersion(id jobs.ID) uint64 {
	v := w.index.version(id)
	if v == 0 {
		return 0
	}
	var b [24]byte
	binary.BigEndian.PutUint64(b[0:], v)
	binary.BigEndian.PutUint64(b[8:], w.wallets.Version())
	binary.BigEndian.PutUint64(b[16:], w.members.Version())
	h := fnv.New64a()
	h.Write(b[:])
	return h.Sum64() | 1
}

// judgeVersion returns a number that changes whenever a record judging
// job id reads does, 0 when its index is not loaded.
func (x *recordIndex) judgeVersion(id jobs.ID) uint64 {
	return x.loadedValue(id, func(ji *jobIndex) uint64 { return ji.judgeVer })
}

// hasVerdict reports whether job id's index holds a verdict record (true
// when it is not loaded: it may).
func (x *recordIndex) hasVerdict(id jobs.ID) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	ji := x.jobs[id]
	return ji == nil || !ji.loaded || ji.verdicts > 0
}

// requestsVersion returns a number that changes whenever a dispute,
// self-check, redo or re-run record of job id does.
func (x *recordIndex) requestsVersion(id jobs.ID) uint64 {
	return x.loadedValue(id, func(ji *jobIndex) uint64 { return ji.reqVersion })
}

// loadedValue returns f of job id's index, 0 when it is not loaded.
func (x *recordIndex) loadedValue(id jobs.ID, f func(*jobIndex) uint64) uint64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	if ji := x.jobs[id]; ji != nil && ji.loaded {
		return f(ji)
	}
	return 0
}

// lastHeard is when this node last saw a new record of job id written by
// processor p (zero when the index holds none, or is not loaded).
func (x *recordIndex) lastHeard(id jobs.ID, p string) time.Time {
	x.mu.Lock()
	defer x.mu.Unlock()
	if ji := x.jobs[id]; ji != nil && ji.loaded {
		return ji.heard[p]
	}
	return time.Time{}
}

// forget drops a job's index (the job is finished and settled).
func (x *recordIndex) forget(id jobs.ID) {
	x.mu.Lock()
	delete(x.jobs, id)
	x.mu.Unlock()
}

// build opens the index's records in key order, as a query returns them.
func (ji *jobIndex) build() *finish.Records {
	keys := make([]string, 0, len(ji.entries))
	for k := range ji.entries {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := finish.NewRecords()
	for _, k := range keys {
		out.Add(ji.id, ji.entries[k])
	}
	return out
}

// indexWriter writes to the store and applies each write to the index at
// once, read back from the store so the index holds what the store does.
type indexWriter struct {
	store *crdt.Store
	index *recordIndex
}

func (w indexWriter) Put(ctx context.Context, key, recordType string, payload []byte) error {
	if err := w.store.Put(ctx, key, recordType, payload); err != nil {
		return err
	}
	if r, err := w.store.Get(ctx, key); err == nil {
		w.index.apply(crdt.Change{Kind: crdt.ChangePut, Key: key, Record: r})
	}
	return nil
}

// PutBatch writes entries as one store batch (one delta for the mesh)
// and applies them to the index.
func (w indexWriter) PutBatch(ctx context.Context, entries []crdt.Entry) error {
	if err := w.store.PutBatch(ctx, entries); err != nil {
		return err
	}
	for _, e := range entries {
		if r, err := w.store.Get(ctx, e.Key); err == nil {
			w.index.apply(crdt.Change{Kind: crdt.ChangePut, Key: e.Key, Record: r})
		}
	}
	return nil
}

func (w indexWriter) Delete(ctx context.Context, key string) error {
	if err := w.store.Delete(ctx, key); err != nil {
		return err
	}
	w.index.apply(crdt.Change{Kind: crdt.ChangeDelete, Key: key})
	return nil
}
