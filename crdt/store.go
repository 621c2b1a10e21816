package crdt

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/query"
	dscrdt "github.com/ipfs/go-ds-crdt"
	ipld "github.com/ipfs/go-ipld-format"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/internal/dsguard"
)

// Store is a replicated key-value store of signed, typed records. It is safe
// for concurrent use.
type Store struct {
	cfg  Config
	log  *slog.Logger
	self peer.ID

	crdt  *dscrdt.Datastore
	bcast *broadcaster
	// unserve stops serving this store's DAG to backfills (nil: none).
	unserve func()
	// guard stands between go-ds-crdt and cfg.Datastore: head walkers that
	// outlive Close get an error instead of a closed datastore.
	guard *dsguard.Datastore
	m     *metrics

	seqMu   sync.Mutex
	lastSeq uint64

	cacheMu  sync.Mutex
	verified map[[32]byte]struct{} // values that passed verification
	// batchSigs are the batch signatures (version 2 records) that held.
	batchSigs *sigCache
	rejected  map[[32]byte]struct{} // values already counted and logged as rejected

	watchMu  sync.Mutex
	watchers map[*watcher]struct{}

	// carryMu orders the checks and writes of carried records (carry.go).
	carryMu sync.Mutex

	// stopRepair ends repairLoop; repairing is done when it has.
	stopRepair context.CancelFunc
	repairing  chan struct{}
	// repairSoon asks repairLoop for a check before its interval ends
	// (RepairSoon).
	repairSoon chan struct{}

	closeOnce sync.Once
	closeErr  error
	done      chan struct{}
}

// New opens a replica over cfg.Datastore and starts syncing it with the
// other replicas on cfg.Topic. Close it before closing the datastore, the
// DAG service or the PubSub, which stay owned by the caller.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	self, err := peer.IDFromPrivateKey(cfg.PrivKey)
	if err != nil {
		return nil, fmt.Errorf("%w: PrivKey: %w", ErrInvalidConfig, err)
	}
	s := &Store{
		cfg:      cfg,
		log:      cfg.Logger.With("component", "crdt"),
		self:     self,
		verified: make(map[[32]byte]struct{}),
		// A batch signature covers several records: a quarter as many.
		batchSigs: newSigCache(max(1, cfg.VerifiedCache/4)),
		rejected:  make(map[[32]byte]struct{}),
		watchers:  make(map[*watcher]struct{}),
		done:      make(chan struct{}),
	}
	s.m, err = newMetrics(cfg.Registerer, s.headCount, s.maxHeight)
	if err != nil {
		return nil, err
	}
	// go-ds-crdt walks the DAG through awaitDAG when the node can tell
	// local blocks; the broadcaster tells it what broadcasts brought.
	var walked ipld.DAGService = cfg.DAGService
	var stored func(cid.Cid)
	if cfg.LocalBlocks != nil && cfg.AnnounceWait > 0 {
		ad := newAwaitDAG(cfg.DAGService, cfg.LocalBlocks, cfg.AnnounceWait, func(outcome string) {
			s.m.awaited.WithLabelValues(outcome).Inc()
		})
		walked, stored = ad, ad.stored
	}
	s.bcast, err = newBroadcaster(cfg.PubSub, cfg.Topic, broadcastConfig{
		maxHeads: cfg.MaxBroadcastHeads, buffer: cfg.BroadcastBuffer, repeat: cfg.RebroadcastInterval,
		count: func(sent, suppressed int) {
			s.m.announced.WithLabelValues("sent").Add(float64(sent))
			s.m.announced.WithLabelValues("suppressed").Add(float64(suppressed))
		},
		greetCount: func(sent bool) {
			if sent {
				s.m.greetings.WithLabelValues("sent").Inc()
			} else {
				s.m.greetings.WithLabelValues("skipped").Inc()
			}
		},
		backfill: cfg.Backfill, local: cfg.LocalBlocks, flood: cfg.FloodPublish,
	}, cfg.DAGService, stored, s.log)
	if err != nil {
		s.m.unregister()
		return nil, err
	}
	opts := dscrdt.DefaultOptions()
	opts.Logger = dsLogger{l: s.log.With("component", "go-ds-crdt")}
	opts.RebroadcastInterval = cfg.RebroadcastInterval
	opts.NumWorkers = cfg.NumWorkers
	opts.DAGSyncerTimeout = cfg.DAGSyncTimeout
	opts.RepairInterval = 0 // repairLoop repairs, spaced by how long a repair takes
	opts.MultiHeadProcessing = !cfg.SerialHeads
	opts.PutHook = s.putHook
	opts.DeleteHook = s.deleteHook
	s.guard = dsguard.New(cfg.Datastore)
	s.crdt, err = dscrdt.New(s.guard, datastore.NewKey(cfg.Namespace), walked, s.bcast, opts)
	if err != nil {
		_ = s.bcast.Close()
		s.m.unregister()
		return nil, fmt.Errorf("crdt: opening go-ds-crdt: %w", err)
	}
	if cfg.Backfill != nil && cfg.LocalBlocks != nil {
		s.bcast.setHeight(func() uint64 { return s.crdt.InternalStats(context.Background()).MaxHeight })
		s.unserve = cfg.Backfill.register(cfg.Topic, cfg.DAGService, cfg.LocalBlocks)
	}
	rctx, stop := context.WithCancel(context.Background())
	s.stopRepair, s.repairing, s.repairSoon = stop, make(chan struct{}), make(chan struct{}, 1)
	go s.repairLoop(rctx)
	s.log.Info("store open", "namespace", cfg.Namespace, "topic", cfg.Topic, "self", self)
	return s, nil
}

// repairSpacing is how many times as long as the last repair took the
// store waits, at least, before the next one; minCheckSpacing is the least
// time between two checks that RepairSoon asks for.
const (
	repairSpacing   = 10
	minCheckSpacing = time.Second
)

// repairLoop re-walks the DAG when go-ds-crdt has marked it dirty (an
// update it gave up on): at start, then every Config.RepairInterval, or
// sooner when RepairSoon asks, but never sooner than repairSpacing times
// the last repair's duration after it. A repair walks every delta from
// the heads to the roots, so its cost grows with the store's history;
// under load (when updates are given up most) a fixed interval would make
// every replica re-walk its whole DAG back to back, holding the CPU that
// the updates the repairs are to recover need.
func (s *Store) repairLoop(ctx context.Context) {
	defer close(s.repairing)
	if s.cfg.RepairInterval == 0 {
		return
	}
	t := time.NewTimer(0)
	defer t.Stop()
	var earliest time.Time // no check before
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.repairSoon:
			if wait := time.Until(earliest); wait > 0 {
				t.Reset(wait)
				continue
			}
		}
		next := s.cfg.RepairInterval
		earliest = time.Now().Add(minCheckSpacing)
		if s.crdt.IsDirty(ctx) {
			start := time.Now()
			err := s.crdt.Repair(ctx)
			took := time.Since(start)
			s.m.repairs.Inc()
			s.m.repairSeconds.Add(took.Seconds())
			if err != nil && ctx.Err() == nil {
				s.log.Warn("store repair", "took", took, "err", err)
			}
			next = max(next, repairSpacing*took)
			earliest = time.Now().Add(max(minCheckSpacing, repairSpacing*took))
		}
		t.Reset(next)
	}
}

// RepairSoon asks for a repair, if the store is dirty, without waiting
// for Config.RepairInterval: a reader that finds a record missing which
// an update it depends on implies (a processor's wallet binding, behind
// that processor's results) calls it. Checks stay spaced as repairLoop
// says; a call never blocks.
func (s *Store) RepairSoon() {
	select {
	case s.repairSoon <- struct{}{}:
	default:
	}
}

// Self returns the peer ID that signs this store's writes.
func (s *Store) Self() peer.ID { return s.self }

// Changes returns a number that grows with every write to this replica's
// datastore (a local write, a merged delta, a carried record) once it is
// visible to reads: a reader that found nothing to do at one number need
// not look again until it changes.
func (s *Store) Changes() uint64 { return s.guard.Writes() }

// Done is closed when the store has been closed.
func (s *Store) Done() <-chan struct{} { return s.done }

// Close stops syncing, leaves the topic and ends every Watch. It does not
// close the Datastore, DAGService or PubSub given in Config. Calling it again
// returns the first result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.unserve != nil {
			s.unserve()
		}
		s.stopRepair()
		<-s.repairing
		// The broadcaster goes first: go-ds-crdt may otherwise wait on it.
		berr := s.bcast.Close()
		cerr := s.crdt.Close()
		s.guard.Shut()
		close(s.done)
		s.closeWatchers()
		s.m.unregister()
		s.closeErr = errors.Join(berr, cerr)
		s.log.Info("store closed")
	})
	return s.closeErr
}

func (s *Store) closed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *Store) headCount() float64 {
	if s.closed() {
		return 0
	}
	return float64(len(s.crdt.InternalStats(context.Background()).Heads))
}

func (s *Store) maxHeight() float64 {
	if s.closed() {
		return 0
	}
	return float64(s.crdt.InternalStats(context.Background()).MaxHeight)
}

// nextSeq returns a write sequence: the wall clock in Unix nanoseconds, but
// strictly greater than the previous one from this store.
func (s *Store) nextSeq() uint64 {
	s.seqMu.Lock()
	defer s.seqMu.Unlock()
	seq := uint64(time.Now().UnixNano())
	if seq <= s.lastSeq {
		seq = s.lastSeq + 1
	}
	s.lastSeq = seq
	return seq
}

// Put signs payload as a record of recordType under key and writes it. The
// write is visible locally when Put returns and reaches other replicas
// through the DAG. It refuses, with ErrOversized, ErrInvalidKey,
// ErrInvalidType or ErrPolicy, any record that readers would reject.
func (s *Store) Put(ctx context.Context, key, recordType string, payload []byte) error {
	if len(payload) > s.cfg.MaxPayload {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrOversized, len(payload), s.cfg.MaxPayload)
	}
	if err := validType(recordType); err != nil {
		return err
	}
	if err := s.write(ctx, Record{Key: key, Type: recordType, Payload: payload}); err != nil {
		return err
	}
	s.m.put.Inc()
	return nil
}

// Delete writes a signed tombstone under key: readers then see ErrNotFound,
// and watchers a ChangeDelete. The policy that governs writing the key also
// governs deleting it.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := s.write(ctx, Record{Key: key, Tombstone: true}); err != nil {
		return err
	}
	s.m.deleted.Inc()
	return nil
}

// Entry is one record of a PutBatch.
type Entry struct {
	Key, Type string
	Payload   []byte
}

// PutBatch writes entries as one delta: every replica merges, stores and
// re-announces them once instead of once per record, which is what makes a
// processor's commitments of one ownership turn cheap for the mesh. The
// records are signed once per group of up to MaxBatchRecords (envelope
// version 2): each still carries what a reader needs to check it alone
// (its place among the group's leaf hashes and the signature), and a
// replica checks the group's signature once. The entries are checked
// before anything is written: one bad entry fails the whole batch with the
// error Put would give. When PutBatch returns nil, every entry is visible
// locally.
func (s *Store) PutBatch(ctx context.Context, entries []Entry) error {
	if s.closed() {
		return ErrClosed
	}
	rs := make([]Record, len(entries))
	for i, e := range entries {
		if len(e.Payload) > s.cfg.MaxPayload {
			return fmt.Errorf("%w: %q: %d bytes, limit %d", ErrOversized, e.Key, len(e.Payload), s.cfg.MaxPayload)
		}
		if err := validType(e.Type); err != nil {
			return err
		}
		r, err := s.prepare(Record{Key: e.Key, Type: e.Type, Payload: e.Payload})
		if err != nil {
			return err
		}
		rs[i] = r
	}
	// One signature per group of up to MaxBatchRecords records (a group
	// of one is an ordinary record).
	sealed := make([][]byte, 0, len(rs))
	for group := range slices.Chunk(rs, MaxBatchRecords) {
		if len(group) == 1 {
			data, err := sealRecord(group[0], s.cfg.PrivKey)
			if err != nil {
				return err
			}
			sealed = append(sealed, data)
			continue
		}
		data, err := sealBatch(group, s.cfg.PrivKey)
		if err != nil {
			return err
		}
		sealed = append(sealed, data...)
	}
	b, err := s.crdt.Batch(ctx)
	if err != nil {
		return fmt.Errorf("crdt: opening a batch: %w", err)
	}
	for i, e := range entries {
		if err := b.Put(ctx, datastore.NewKey(e.Key), sealed[i]); err != nil {
			return fmt.Errorf("crdt: writing %q: %w", e.Key, err)
		}
	}
	if err := b.Commit(ctx); err != nil {
		return fmt.Errorf("crdt: committing %d records: %w", len(entries), err)
	}
	s.m.put.Add(float64(len(entries)))
	return nil
}

func (s *Store) write(ctx context.Context, r Record) error {
	if s.closed() {
		return ErrClosed
	}
	data, err := s.seal(r)
	if err != nil {
		return err
	}
	if err := s.crdt.Put(ctx, datastore.NewKey(r.Key), data); err != nil {
		return fmt.Errorf("crdt: writing %q: %w", r.Key, err)
	}
	return nil
}

// seal checks r's key against the rules and the author policy, then signs
// it as this store's next write.
func (s *Store) seal(r Record) ([]byte, error) {
	r, err := s.prepare(r)
	if err != nil {
		return nil, err
	}
	return sealRecord(r, s.cfg.PrivKey)
}

// prepare checks r's key against the rules and the author policy and
// makes it this store's next write, ready to sign.
func (s *Store) prepare(r Record) (Record, error) {
	if err := validKey(r.Key); err != nil {
		return Record{}, err
	}
	if s.cfg.AuthorPolicy != nil {
		if err := s.cfg.AuthorPolicy(r.Key, s.self); err != nil {
			return Record{}, fmt.Errorf("%w: %w", ErrPolicy, err)
		}
	}
	r.Author = s.self
	r.Seq = s.nextSeq()
	return r, nil
}

// Get returns the verified record under key. It fails with ErrNotFound when
// there is none (or it was deleted) and with a *RejectError, matching
// ErrRejected and the reason, when the stored record fails verification.
func (s *Store) Get(ctx context.Context, key string) (Record, error) {
	if s.closed() {
		return Record{}, ErrClosed
	}
	if err := validKey(key); err != nil {
		return Record{}, err
	}
	r, _, err := s.newest(ctx, key)
	return r, err
}

// Query returns the verified records whose key lies under prefix (path
// semantics: "/jobs" matches "/jobs/a", not "/jobs" or "/jobsx"), ordered
// by key.
// Rejected records are counted and skipped; deleted keys are absent.
func (s *Store) Query(ctx context.Context, prefix string) ([]Record, error) {
	return s.QueryKeys(ctx, prefix, nil)
}

// QueryKeys is Query for the keys under prefix that keep accepts (all of
// them when keep is nil). A record whose key keep refuses is neither
// decoded nor verified, so a scan for a few kinds of record under a large
// prefix costs little more than reading the keys.
func (s *Store) QueryKeys(ctx context.Context, prefix string, keep func(key string) bool) ([]Record, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	if keep != nil {
		return s.queryKept(ctx, prefix, keep)
	}
	res, err := s.crdt.Query(ctx, query.Query{Prefix: cleanPrefix(prefix)})
	if err != nil {
		return nil, fmt.Errorf("crdt: query %q: %w", prefix, err)
	}
	defer res.Close()
	var out []Record
	for e := range res.Next() {
		if e.Error != nil {
			return nil, fmt.Errorf("crdt: query %q: %w", prefix, e.Error)
		}
		if keep != nil && !keep(e.Key) {
			continue
		}
		r, err := s.open(e.Key, e.Value)
		if err != nil {
			continue
		}
		out = append(out, r)
	}
	carried, err := s.carriedUnder(ctx, prefix, nil)
	if err != nil {
		return nil, err
	}
	return withCarried(out, carried), nil
}

// setKeys is where go-ds-crdt (v0.6) keeps, under its namespace, the
// current value of each key: "<namespace>/s/k<key>/v" (and its priority
// beside it, ".../p"). A key is in the set exactly when its value is.
const setKeys, setValueSuffix = "/s/k", "/v"

// queryKept is QueryKeys with a filter: it lists the keys under prefix
// from the datastore without their values (go-ds-crdt's own queries
// always read every value, so a filtered scan under /jobs would read
// every record of every job), and reads only the kept keys' records.
func (s *Store) queryKept(ctx context.Context, prefix string, keep func(key string) bool) ([]Record, error) {
	base := datastore.NewKey(s.cfg.Namespace).String() + setKeys
	res, err := s.guard.Query(ctx, query.Query{Prefix: base + cleanPrefix(prefix), KeysOnly: true})
	if err != nil {
		return nil, fmt.Errorf("crdt: query %q: %w", prefix, err)
	}
	defer res.Close()
	self := cleanPrefix(prefix) // under itself for the datastore, not for Query
	var keys []string
	for e := range res.Next() {
		if e.Error != nil {
			return nil, fmt.Errorf("crdt: query %q: %w", prefix, e.Error)
		}
		k, ok := strings.CutSuffix(strings.TrimPrefix(e.Key, base), setValueSuffix)
		if ok && k != self && keep(k) {
			keys = append(keys, k)
		}
	}
	var out []Record
	for _, k := range keys {
		data, err := s.crdt.Get(ctx, datastore.NewKey(k))
		if errors.Is(err, datastore.ErrNotFound) {
			continue // removed since it was listed
		}
		if err != nil {
			return nil, fmt.Errorf("crdt: query %q: reading %q: %w", prefix, k, err)
		}
		r, err := s.open(k, data)
		if err != nil {
			continue
		}
		out = append(out, r)
	}
	carried, err := s.carriedUnder(ctx, prefix, keep)
	if err != nil {
		return nil, err
	}
	return withCarried(out, carried), nil
}

func cleanPrefix(prefix string) string {
	return datastore.NewKey(prefix).String()
}

// recordID identifies a stored value: the key it sits under and its bytes.
func recordID(key string, data []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write(data)
	var id [32]byte
	h.Sum(id[:0])
	return id
}

// open verifies data stored under key, counting and logging a rejection.
// Values that verified before skip the signature check: hashing is far
// cheaper than Ed25519, and Query re-reads every record under a prefix.
func (s *Store) open(key string, data []byte) (Record, error) {
	id := recordID(key, data)
	s.cacheMu.Lock()
	_, ok := s.verified[id]
	s.cacheMu.Unlock()
	if ok {
		if e, err := decodeEnvelope(data, s.cfg.MaxPayload); err == nil {
			return e.Record, nil
		}
	}
	r, err := openRecord(key, data, s.cfg.MaxPayload, s.cfg.AuthorPolicy, s.batchSigs)
	if err != nil {
		s.reject(id, key, len(data), err)
		return Record{}, &RejectError{Key: key, Reason: err}
	}
	s.cacheMu.Lock()
	remember(s.verified, id, s.cfg.VerifiedCache)
	s.cacheMu.Unlock()
	return r, nil
}

// remember adds id to a bounded set, clearing the set when it is full: a
// cheap bound whose only cost is re-verifying after a reset.
func remember(set map[[32]byte]struct{}, id [32]byte, limit int) {
	if len(set) >= limit {
		clear(set)
	}
	set[id] = struct{}{}
}

// reject counts and logs a bad record the first time this store sees it, so
// that re-reading one bad record neither floods the log nor inflates the
// metric.
func (s *Store) reject(id [32]byte, key string, size int, err error) {
	s.cacheMu.Lock()
	_, seen := s.rejected[id]
	if !seen {
		remember(s.rejected, id, s.cfg.RejectLogMemory)
	}
	s.cacheMu.Unlock()
	if seen {
		return
	}
	reason := Reason(err)
	s.m.rejected.WithLabelValues(reason).Inc()
	s.log.Warn("rejected record", "key", key, "reason", reason, "err", err, "bytes", size)
}
