package processor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// RoomStores are the stores of the MacroJobs' rooms beside each job's
// store (jobstore.Manager with room stores): a member opens its room's as
// it joins, and every holder of a room store writes the MacroJob's
// aggregates to the job's store when they are due (aggregate).
type RoomStores interface {
	OpenRoom(ctx context.Context, id jobs.ID, macro uint64) (*crdt.Store, error)
	Room(id jobs.ID, macro uint64) (*crdt.Store, bool)
	RoomsOf(id jobs.ID) []uint64
	// Get returns job id's own store.
	Get(id jobs.ID) (*crdt.Store, bool)
}

// aggKind is one of a MacroJob's two aggregates: what it carries.
type aggKind struct {
	typ   string          // records.CommittedType or records.DisclosedType
	kinds map[string]bool // the room record types it carries
}

var aggKinds = []aggKind{
	{records.CommittedType, map[string]bool{records.TookType: true, records.CommitType: true}},
	{records.DisclosedType, map[string]bool{records.TookType: true, records.CommitType: true, records.ResultType: true}},
}

// due reports whether record key, which the job store lacks, makes
// aggregate k due: for the committed aggregate a regular MicroJob's
// commitment, for the disclosed one a disclosure or the verifier's
// commitment. Took records go along with them (a verifier's runner and a
// member that locked MicroJobs it never committed write theirs after the
// set is complete), and alone only by the committed aggregate's fallback.
func (k aggKind) due(key records.Key, regular map[jobs.ID]bool) (trigger, fallback bool) {
	switch {
	case key.Type == records.TookType:
		return false, k.typ == records.CommittedType
	case k.typ == records.CommittedType:
		return true, true
	}
	t := key.Type == records.ResultType || !regular[key.Micro]
	return t, t
}

func (k aggKind) key(id jobs.ID, macro uint64, self string) string {
	if k.typ == records.CommittedType {
		return records.CommittedKey(id, macro, self)
	}
	return records.DisclosedKey(id, macro, self)
}

// aggSeen is what a holder of a room store noted of one aggregate of its
// MacroJob: since when the job store has lacked records of the room
// (zero: it lacks none), and since when the room's set was complete.
type aggSeen struct {
	missing, complete time.Time
}

// Limits of one aggregate: at most crdt.MaxCarried envelopes and
// maxAggregateBytes of them (halved while the store refuses the payload
// as too large), inside the default record payload limit. The records
// the job store lacks go first, this node's own first of all, so that
// what does not fit goes in the next one.
const maxAggregateBytes = 224 << 10

// aggregate writes the MacroJob aggregates that are due, for every room
// store this node holds, of running and finished jobs alike. An aggregate
// carries every record of its kinds that this node reads of the MacroJob,
// from the room store and the job store, so that the last one a writer
// wrote holds all it knew. It is due when the job store lacks records of
// the room and either the room's set is complete (every MicroJob
// committed, or every commitment disclosed) and this node's turn has come
// (aggregateRank: the author of the record that completed it first, then
// every AggregateGrace the next), or the records have been lacking for
// longer than the fallback (aggregateFallback), when one holder after
// another, in the same order, writes what it has.
func (w *Worker) aggregate(ctx context.Context) {
	if w.p.Rooms == nil {
		return
	}
	now := w.now()
	w.mu.Lock()
	known := slices.Collect(maps.Values(w.known))
	w.mu.Unlock()
	for _, js := range known {
		// A finished job too: its verdict came from the records of the
		// nodes that hold its rooms, and the others still read them to
		// check it.
		id := js.plan().JobID
		job, ok := w.p.Rooms.Get(id)
		macros := w.p.Rooms.RoomsOf(id)
		if !ok || len(macros) == 0 {
			continue
		}
		ver := w.index.Version(id)
		w.mu.Lock()
		quiet := ver != 0 && js.aggQuiet == ver
		w.mu.Unlock()
		if quiet {
			continue // nothing changed since every record was carried
		}
		pending := false
		for _, macro := range macros {
			if macro < uint64(len(js.plan().Macros)) && w.aggregateRoom(ctx, js, job, macro, now) {
				pending = true
			}
		}
		if !pending {
			w.mu.Lock()
			js.aggQuiet = ver
			w.mu.Unlock()
		}
	}
}

// aggregateRoom writes the aggregates of MacroJob macro of js that are
// due, and reports whether the job store still lacks records of its room.
// A room is read again only once its store was written since it last
// lacked none: what the job store gains never makes it lack a record.
func (w *Worker) aggregateRoom(ctx context.Context, js *jobState, job *crdt.Store, macro uint64, now time.Time) bool {
	id := js.plan().JobID
	room, ok := w.p.Rooms.Room(id, macro)
	if !ok {
		return false
	}
	changes := room.Changes()
	w.mu.Lock()
	quiet, seen := js.roomQuiet[macro]
	w.mu.Unlock()
	if seen && quiet == changes {
		return false
	}
	rs, err := readRoom(ctx, id, macro, room, job)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("reading a MacroJob's room records", "job", id, "macro", macro, "err", err)
		}
		return true
	}
	pending := false
	for _, k := range aggKinds {
		lacks, err := w.aggregateOne(ctx, js, rs, macro, k, now)
		if err != nil && ctx.Err() == nil {
			w.log.Warn("writing a MacroJob aggregate", "job", id, "macro", macro, "kind", k.typ, "err", err)
		}
		pending = pending || lacks || err != nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if pending {
		delete(js.roomQuiet, macro)
	} else {
		if js.roomQuiet == nil {
			js.roomQuiet = map[uint64]uint64{}
		}
		js.roomQuiet[macro] = changes
	}
	return pending
}

// roomRecords are a MacroJob's room records as this node reads them: in
// its room store and in its job store (written or carried).
type roomRecords struct {
	room, job     *crdt.Store
	inRoom, inJob []crdt.Record
}

// readRoom reads MacroJob macro's room records of job id from room and
// job, once for both aggregates.
func readRoom(ctx context.Context, id jobs.ID, macro uint64, room, job *crdt.Store) (roomRecords, error) {
	keep := func(key string) bool {
		_, _, ok := records.RoomOf(key)
		return ok
	}
	prefix := records.MacroPrefix(id, macro)
	inRoom, err := room.QueryKeys(ctx, prefix, keep)
	if err != nil {
		return roomRecords{}, err
	}
	inJob, err := job.QueryKeys(ctx, prefix, keep)
	if err != nil {
		return roomRecords{}, err
	}
	return roomRecords{room: room, job: job, inRoom: inRoom, inJob: inJob}, nil
}

// aggregateOne writes this node's aggregate k of MacroJob macro, whose
// room records are rs, when it is due, and reports whether the job store
// lacked records of it.
func (w *Worker) aggregateOne(ctx context.Context, js *jobState, rs roomRecords, macro uint64, k aggKind, now time.Time) (bool, error) {
	id := js.plan().JobID
	have := make(map[string]crdt.Record, len(rs.inJob))
	for _, r := range rs.inJob {
		have[r.Key] = r
	}
	regular := regularOf(&js.plan().Macros[macro])
	var set, lacking []crdt.Record
	trigger, fallback := false, false
	for _, r := range rs.inRoom {
		if !k.kinds[r.Type] {
			continue
		}
		key, err := records.Parse(r.Key)
		if err != nil {
			continue
		}
		if k.typ == records.CommittedType && key.Type == records.CommitType && !regular[key.Micro] {
			continue // a verifier's: disclosed with the rest
		}
		set = append(set, r)
		if h, ok := have[r.Key]; !ok || h.Seq < r.Seq {
			lacking = append(lacking, r)
			t, f := k.due(key, regular)
			trigger, fallback = trigger || t, fallback || f
		}
	}
	complete := trigger && setComplete(js, macro, k, set)
	w.mu.Lock()
	seen := js.aggSeen[aggAt{macro, k.typ}]
	if !trigger && !fallback {
		delete(js.aggSeen, aggAt{macro, k.typ})
		w.mu.Unlock()
		return false, nil
	}
	if seen.missing.IsZero() {
		seen.missing = now
	}
	if complete && seen.complete.IsZero() {
		seen.complete = now
	}
	if js.aggSeen == nil {
		js.aggSeen = map[aggAt]aggSeen{}
	}
	js.aggSeen[aggAt{macro, k.typ}] = seen
	w.mu.Unlock()
	rank := time.Duration(aggregateRank(id, macro, set, w.self))
	due := complete && !now.Before(seen.complete.Add(rank*w.aggregateGrace())) ||
		!now.Before(seen.missing.Add((rank+1)*w.aggregateFallback(k)))
	if !due {
		return true, nil
	}
	var n int
	var err error
	for budget := maxAggregateBytes; ; budget /= 2 {
		var payload []byte
		payload, n, err = w.carry(ctx, rs.room, rs.job, set, rs.inJob, lacking, k, budget)
		if err != nil || n == 0 {
			return true, err
		}
		err = w.p.Store.Put(ctx, k.key(id, macro, w.self), k.typ, payload)
		if !errors.Is(err, crdt.ErrOversized) || n == 1 {
			break
		}
		// The store takes smaller payloads ([store] max_payload): carry
		// fewer, the lacking first; the rest go in the next one.
	}
	if err != nil {
		return true, err
	}
	w.m.aggregates.WithLabelValues(k.typ).Inc()
	w.log.Debug("MacroJob aggregate written", "job", id, "macro", macro, "kind", k.typ, "records", n, "lacking", len(lacking), "complete", complete, "rank", rank)
	w.mu.Lock()
	delete(js.aggSeen, aggAt{macro, k.typ})
	w.mu.Unlock()
	return true, nil
}

// regularOf returns m's regular MicroJobs.
func regularOf(m *jobs.MacroJob) map[jobs.ID]bool {
	out := make(map[jobs.ID]bool, m.Regular)
	for _, mu := range m.Micros[:m.Regular] {
		out[mu.ID] = true
	}
	return out
}

// aggAt names one aggregate of a job: its MacroJob and type.
type aggAt struct {
	macro uint64
	typ   string
}

// carry returns the payload of an aggregate of kind k: the envelopes of
// the records the job store lacks (this node's own first), then of the
// rest of the room's and the job store's records of its kinds, within the
// aggregate's limits; and how many it holds.
func (w *Worker) carry(ctx context.Context, room, job *crdt.Store, set, inJob, lacking []crdt.Record, k aggKind, budget int) ([]byte, int, error) {
	self := w.p.Store.Self()
	slices.SortStableFunc(lacking, func(a, b crdt.Record) int {
		return boolOrder(a.Author != self, b.Author != self)
	})
	type src struct {
		key   string
		store *crdt.Store
	}
	var order []src
	taken := map[string]bool{}
	add := func(key string, s *crdt.Store) {
		if !taken[key] {
			taken[key] = true
			order = append(order, src{key, s})
		}
	}
	for _, r := range lacking {
		add(r.Key, room)
	}
	for _, r := range set {
		add(r.Key, room)
	}
	for _, r := range inJob {
		if k.kinds[r.Type] {
			add(r.Key, job)
		}
	}
	var envs [][]byte
	size := 0
	for _, s := range order {
		env, err := s.store.Envelope(ctx, s.key)
		if err != nil {
			continue // gone meanwhile, or refused: not carried
		}
		if len(envs) == crdt.MaxCarried || size+len(env) > budget && len(envs) > 0 {
			break
		}
		envs, size = append(envs, env), size+len(env)
	}
	if len(envs) == 0 {
		return nil, 0, nil
	}
	payload, err := crdt.EncodeCarried(envs)
	return payload, len(envs), err
}

// boolOrder orders false before true.
func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// setComplete reports whether set, the records of aggregate k of
// MacroJob macro of js in this node's room store, is complete: for the
// committed aggregate, every regular MicroJob has as many commitments as
// the job has replicas; for the disclosed one, every MicroJob (the
// verifier too, once drawn) has, and each commitment its disclosure.
func setComplete(js *jobState, macro uint64, k aggKind, set []crdt.Record) bool {
	m := &js.plan().Macros[macro]
	micros := m.Micros[:m.Regular]
	if k.typ == records.DisclosedType {
		if m.Verifier() == nil {
			return false
		}
		micros = m.Micros
	}
	replicas := max(1, int(js.info.Requirements.Replicas))
	commits := map[jobs.ID]map[string]bool{}
	results := map[[2]string]bool{}
	for _, r := range set {
		key, err := records.Parse(r.Key)
		if err != nil {
			continue
		}
		switch key.Type {
		case records.CommitType:
			if commits[key.Micro] == nil {
				commits[key.Micro] = map[string]bool{}
			}
			commits[key.Micro][key.Peer] = true
		case records.ResultType:
			results[[2]string{key.Micro.String(), key.Peer}] = true
		}
	}
	for _, mu := range micros {
		if len(commits[mu.ID]) < replicas {
			return false
		}
	}
	if k.typ == records.DisclosedType {
		for micro, by := range commits {
			for p := range by {
				if !results[[2]string{micro.String(), p}] {
					return false
				}
			}
		}
	}
	return true
}

// aggregateRank is processor self's place among those that write an
// aggregate of the records set of MacroJob macro of job id: the author of
// the newest record (whose write completed the set) first, then the
// other authors by a hash of the MacroJob and their ID; a node that wrote
// none of set comes after them all.
func aggregateRank(id jobs.ID, macro uint64, set []crdt.Record, self string) int {
	var newest crdt.Record
	authors := map[string]bool{}
	for _, r := range set {
		authors[r.AuthorText()] = true
		if r.Seq > newest.Seq {
			newest = r
		}
	}
	first := newest.AuthorText()
	rest := make([]string, 0, len(authors))
	for a := range authors {
		if a != first {
			rest = append(rest, a)
		}
	}
	hash := func(p string) []byte {
		h := sha256.Sum256([]byte(id.String() + "/" + strconv.FormatUint(macro, 10) + "/" + p))
		return h[:]
	}
	slices.SortFunc(rest, func(a, b string) int {
		if c := bytes.Compare(hash(a), hash(b)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	order := append([]string{first}, rest...)
	if i := slices.Index(order, self); i >= 0 {
		return i
	}
	return len(order)
}

// aggregateGrace is Config.AggregateGrace with its default applied.
func (w *Worker) aggregateGrace() time.Duration {
	if w.cfg.AggregateGrace > 0 {
		return w.cfg.AggregateGrace
	}
	return DefaultAggregateGrace
}

// DefaultAggregateGrace is Config.AggregateGrace's default: longer than a
// store write takes to reach the job's other nodes on a loaded node (at
// 1s, half the MacroJobs of a job of 100 processors on 2 cores got a
// second aggregate), so that the next in rank finds the aggregate before
// its turn. It costs time only when the completer stops before writing.
const DefaultAggregateGrace = 5 * time.Second

// aggregateFallback is how long the job store may lack records of a room
// before its holders write what they have, one after another: for
// disclosures, a third of DiscloseGrace (the MacroJob's members disclose
// within a Poll or two of its last commitment, and one that never does
// is redone after DiscloseGrace once the others see its MacroJob
// complete, which they learn from these aggregates); for took records and
// commitments, a room lock's TTL (nothing outside the room waits for them
// before the MacroJob is complete, and a room stalled for longer than a
// lock is taken over).
func (w *Worker) aggregateFallback(k aggKind) time.Duration {
	if k.typ == records.DisclosedType {
		return max(w.cfg.DiscloseGrace/3, w.aggregateGrace())
	}
	return w.lockTTL()
}
