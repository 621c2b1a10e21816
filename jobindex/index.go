package jobindex

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// Index is a node's live index of the records of the jobs it follows.
type Index struct {
	store crdt.Replicated

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
	// sorted is committers as finish.Progress reads it, changed one
	// MicroJob at a time (count).
	sorted finish.Committers
	// tallyVer is bumped whenever disclosed or committers change; tally
	// is their snapshot (Progress, for one replica) at tallyAt.
	tallyVer, tallyAt uint64
	tally             *finish.Progress
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
	// verdicts counts the verdict records held; reveals the reveal
	// records of the job's check seed.
	verdicts int
	reveals  int
	// heard is, by author, when this node last saw a new record of the
	// job from that processor (for those in the load, the load's time):
	// a processor still writing is alive, however far behind its view
	// of the store is.
	heard map[string]time.Time
}

// New returns an empty index over store; Run feeds it.
func New(store crdt.Replicated) *Index {
	return &Index{store: store, jobs: map[jobs.ID]*jobIndex{}, changed: make(chan struct{}, 1)}
}

// OnChange has f called after any index changed. Call it before Run.
func (x *Index) OnChange(f func()) { x.onChange = f }

// Changed is signalled after any index changed; one signal stands for
// every change since the last was received.
func (x *Index) Changed() <-chan struct{} { return x.changed }

// Signal signals Changed (and calls the OnChange function) as a change
// would: a write that is not a record change may make a job due too.
func (x *Index) Signal() {
	select {
	case x.changed <- struct{}{}:
	default:
	}
	if x.onChange != nil {
		x.onChange()
	}
}

// Run feeds the index from changes, a watch on records.JobsPrefix started
// before anything is read, until it closes. onRecord is called with the
// records of the noticed types, onOverflow when the watch overflowed.
func (x *Index) Run(changes <-chan crdt.Change, onRecord func(crdt.Record), onOverflow func()) {
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
			x.Signal()
			continue
		}
		if c.Kind == crdt.ChangePut && onRecord != nil && noticed[c.Record.Type] {
			onRecord(c.Record)
		}
		x.apply(c)
	}
}

// noticed are the record types the index passes to its onRecord callback:
// jobs (discovery without a query), requests for work outside the queues
// (disputes, self-checks, redos) and the ask records that point a
// re-runner at a job's store.
var noticed = map[string]bool{records.JobType: true, records.DisputeType: true, records.CheckType: true, records.RedoType: true, records.AskType: true}

// apply routes one change under a job to its job's index (the job's own
// record is not among the records it indexes).
func (x *Index) apply(c crdt.Change) {
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
	x.Signal()
}

func (ji *jobIndex) change(c crdt.Change) {
	if records.IsAggregate(c.Key) {
		// Read as the records it carries, which arrive as changes of
		// their own; its writer is alive all the same.
		if c.Kind == crdt.ChangePut {
			ji.hear(c.Record.AuthorText())
		}
		return
	}
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
		ji.hear(c.Record.AuthorText())
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

// hear notes a new record of the job from author now.
func (ji *jobIndex) hear(author string) {
	if ji.heard == nil {
		ji.heard = map[string]time.Time{}
	}
	ji.heard[author] = time.Now()
}

// count keeps the per-MicroJob disclosure and commitment counters in
// step with entries.
func (ji *jobIndex) count(key string, delta int) {
	p, ok := ji.entries[key]
	switch {
	case !ok:
	case p.Verdict:
		ji.verdicts += delta
	case p.Reveal:
		ji.reveals += delta
	case p.Request != nil:
		ji.requests += delta
		ji.reqVersion++
	case p.Rerun != nil:
		ji.reqVersion++
	case p.Discl != nil:
		ji.tallyVer++
		m := p.Discl.MicroID
		ji.disclosed[m] += delta
		if ji.disclosed[m] <= 0 {
			delete(ji.disclosed, m)
		}
	case p.Commit != nil:
		ji.tallyVer++
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
		ji.sorted.Set(m, slices.Sorted(maps.Keys(ji.committers[m])))
	}
}

// MayRequest reports whether job id may hold dispute, self-check or redo
// records: false only when its loaded index holds none.
func (x *Index) MayRequest(id jobs.ID) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	ji := x.jobs[id]
	return ji == nil || !ji.loaded || ji.requests > 0
}

// Records returns job id's records, loading the index when it is new or
// stale. The result is shared: callers must not modify it.
func (x *Index) Records(ctx context.Context, id jobs.ID) (*finish.Records, error) {
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
			return x.Query(ctx, id)
		}
		ji.loading, ji.buf = true, nil
		x.mu.Unlock()

		recs, err := x.store.QueryKeys(ctx, records.JobKey(id)+"/", records.NotAggregate)

		x.mu.Lock()
		ji.loading = false
		if err != nil {
			x.mu.Unlock()
			return nil, err
		}
		ji.entries = make(map[string]finish.Part, len(recs))
		ji.disclosed = map[jobs.ID]int{}
		ji.committers = map[jobs.ID]map[string]int{}
		ji.sorted = finish.Committers{}
		ji.requests, ji.verdicts, ji.reveals = 0, 0, 0
		ji.tallyVer++
		heard := ji.heard
		ji.heard = make(map[string]time.Time, len(heard))
		now := time.Now()
		for _, r := range recs {
			ji.entries[r.Key] = finish.OpenPart(id, r)
			ji.count(r.Key, +1)
			a := r.AuthorText()
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

// Query reads a job's records without the index.
func (x *Index) Query(ctx context.Context, id jobs.ID) (*finish.Records, error) {
	recs, err := x.store.QueryKeys(ctx, records.JobKey(id)+"/", records.NotAggregate)
	if err != nil {
		return nil, err
	}
	out := finish.NewRecords()
	for _, r := range recs {
		out.Add(id, finish.OpenPart(id, r))
	}
	return out, nil
}

// Version returns a number that changes whenever job id's index does.
func (x *Index) Version(id jobs.ID) uint64 {
	return x.loadedValue(id, func(ji *jobIndex) uint64 { return ji.version })
}

// JudgeVersion returns a number that changes whenever a record judging
// job id reads does, 0 when its index is not loaded.
func (x *Index) JudgeVersion(id jobs.ID) uint64 {
	return x.loadedValue(id, func(ji *jobIndex) uint64 { return ji.judgeVer })
}

// HasVerdict reports whether job id's index holds a verdict record (true
// when it is not loaded: it may).
func (x *Index) HasVerdict(id jobs.ID) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	ji := x.jobs[id]
	return ji == nil || !ji.loaded || ji.verdicts > 0
}

// Reveals counts the reveal records of job id's check seed its index
// holds (0 when it is not loaded).
func (x *Index) Reveals(id jobs.ID) int {
	return int(x.loadedValue(id, func(ji *jobIndex) uint64 { return uint64(ji.reveals) }))
}

// RequestsVersion returns a number that changes whenever a dispute,
// self-check, redo or re-run record of job id does.
func (x *Index) RequestsVersion(id jobs.ID) uint64 {
	return x.loadedValue(id, func(ji *jobIndex) uint64 { return ji.reqVersion })
}

// loadedValue returns f of job id's index, 0 when it is not loaded.
func (x *Index) loadedValue(id jobs.ID, f func(*jobIndex) uint64) uint64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	if ji := x.jobs[id]; ji != nil && ji.loaded {
		return f(ji)
	}
	return 0
}

// LastHeard is when this node last saw a new record of job id written by
// processor p (zero when the index holds none, or is not loaded).
func (x *Index) LastHeard(id jobs.ID, p string) time.Time {
	x.mu.Lock()
	defer x.mu.Unlock()
	if ji := x.jobs[id]; ji != nil && ji.loaded {
		return ji.heard[p]
	}
	return time.Time{}
}

// Forget drops a job's index (the job is finished and settled).
func (x *Index) Forget(id jobs.ID) {
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

// Writer writes to the store and applies each write to the index at
// once, read back from the store so the index holds what the store does.
type Writer struct {
	store crdt.Replicated
	index *Index
}

var _ crdt.Writer = Writer{}

// Writer returns a writer to the index's store through the index.
func (x *Index) Writer() Writer { return Writer{store: x.store, index: x} }

func (w Writer) Put(ctx context.Context, key, recordType string, payload []byte) error {
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
func (w Writer) PutBatch(ctx context.Context, entries []crdt.Entry) error {
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

func (w Writer) Delete(ctx context.Context, key string) error {
	if err := w.store.Delete(ctx, key); err != nil {
		return err
	}
	w.index.apply(crdt.Change{Kind: crdt.ChangeDelete, Key: key})
	return nil
}
