package jobstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/query"
	ipld "github.com/ipfs/go-ipld-format"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// Root is the datastore prefix of every job store and manifest.
const Root = "/jobmesh/v2/job"

// Namespace is the datastore prefix under which job id's store keeps
// its state.
func Namespace(id jobs.ID) string { return Root + "/" + id.String() }

// manifestRoot holds one manifest per job store.
const manifestRoot = "/jobmesh/v2/jobmeta"

func manifestKey(id jobs.ID) datastore.Key {
	return datastore.NewKey(manifestRoot + "/" + id.String())
}

// Topic is the pubsub topic of job id's store.
func Topic(id jobs.ID) string { return "/jobmesh/2/job/" + id.String() + "/crdt" }

// ErrForeignRecord: a record that is not a job-level record of the
// store's job.
var ErrForeignRecord = errors.New("jobstore: record of another job or level")

// Policy is job id's store's author rule: only job-level records of job
// id (ErrForeignRecord otherwise), each by an author base allows.
func Policy(id jobs.ID, base crdt.AuthorPolicy) crdt.AuthorPolicy {
	return func(key string, author peer.ID) error {
		l, job, err := records.KeyLevel(key)
		if err != nil {
			return err
		}
		if l != records.JobLevel || job != id {
			return fmt.Errorf("%w: %q in the store of job %s", ErrForeignRecord, key, id)
		}
		if base == nil {
			return nil
		}
		return base(key, author)
	}
}

// BlockDeleter deletes blocks from the node's block store (the DAG
// blocks of a dropped job store).
type BlockDeleter interface {
	DeleteBlock(ctx context.Context, c cid.Cid) error
}

// Config shapes a Manager.
type Config struct {
	// Store is the template of every job store: Datastore, DAGService,
	// PubSub, PrivKey, AuthorPolicy (the mesh's; each job store adds
	// Policy), Logger and timings. Namespace and Topic are set per job;
	// Registerer is ignored (the crdt metrics have one name per node).
	Store crdt.Config
	// Rooms keeps each MacroJob's room records (records.RoomOf: took
	// records, commitments, disclosures) in a store of the MacroJob's
	// own, which only the nodes that write or read them open (rooms.go);
	// the job store receives them carried by aggregates. Default false:
	// they live in the job store.
	Rooms bool
	// Blocks deletes a dropped store's DAG blocks. Required.
	Blocks BlockDeleter
	// Retention is how long a job's store is kept after the job is over
	// (End): the evidence a dispute needs. Default 24h.
	Retention time.Duration
	// Forget is how long a dropped job is remembered, so that a write
	// arriving late (a holder record, a straggler's re-run) is refused
	// instead of opening a store again. Default 7 days.
	Forget time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Registerer receives the Manager's metrics (jobmesh_jobstore_*),
	// registered once by New and removed by Close. Default nil: not
	// registered.
	Registerer prometheus.Registerer
}

// DefaultRetention is Config.Retention's default.
const DefaultRetention = 24 * time.Hour

// DefaultForget is Config.Forget's default.
const DefaultForget = 7 * 24 * time.Hour

func (c *Config) setDefaults() error {
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	if c.Forget == 0 {
		c.Forget = DefaultForget
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Store.Logger == nil {
		c.Store.Logger = slog.Default()
	}
	switch {
	case c.Retention < 0 || c.Forget < 0:
		return fmt.Errorf("jobstore: Retention %s or Forget %s is negative", c.Retention, c.Forget)
	case c.Blocks == nil:
		return errors.New("jobstore: Blocks is required")
	case c.Store.Datastore == nil:
		return errors.New("jobstore: Store.Datastore is required")
	}
	return nil
}

// manifest is what the datastore remembers of a job store between runs.
type manifest struct {
	Opened time.Time `json:"opened"`
	// Ended is when the job was over (zero while it runs).
	Ended time.Time `json:"ended,omitzero"`
	// Dropped is when the store was dropped (zero while it is kept): the
	// job is remembered for Config.Forget, so that a late write does not
	// open a store nothing would ever end.
	Dropped time.Time `json:"dropped,omitzero"`
	// Rooms are the MacroJobs whose room stores this node opened.
	Rooms []uint64 `json:"rooms,omitempty"`
}

// Manager owns this node's job stores.
type Manager struct {
	cfg     Config
	log     *slog.Logger
	m       *metrics
	refused *refusals

	mu   sync.Mutex
	open map[jobs.ID]*crdt.Store
	// rooms are the open room stores of each job in open (rooms.go).
	rooms     map[jobs.ID]map[uint64]*crdt.Store
	meta      map[jobs.ID]manifest
	followers map[*follower]struct{}
	closed    bool
}

// follower is one Follow subscription.
type follower struct {
	fn func(jobs.ID, *crdt.Store)
}

// New returns a Manager; Resume reopens what an earlier run held.
func New(cfg Config) (*Manager, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	met, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	return &Manager{
		cfg: cfg, log: cfg.Store.Logger.With("component", "jobstore"), m: met,
		refused: &refusals{seen: map[refusal]struct{}{}, n: met.refused},
		open:    map[jobs.ID]*crdt.Store{}, meta: map[jobs.ID]manifest{}, rooms: map[jobs.ID]map[uint64]*crdt.Store{},
		followers: map[*follower]struct{}{},
	}, nil
}

// ErrClosed: the Manager has been closed.
var ErrClosed = errors.New("jobstore: closed")

// ErrDropped: the job's store was dropped after its retention; it is not
// opened again.
var ErrDropped = errors.New("jobstore: the job's store was dropped after its retention")

// Open returns job id's store, opening it (and its manifest) if this node
// does not hold it yet.
func (m *Manager) Open(ctx context.Context, id jobs.ID) (*crdt.Store, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	if s := m.open[id]; s != nil {
		return s, nil
	}
	mf, ok := m.meta[id]
	if ok && !mf.Dropped.IsZero() {
		return nil, fmt.Errorf("%w: job %s, at %s", ErrDropped, id, mf.Dropped.UTC().Format(time.RFC3339))
	}
	if !ok {
		mf = manifest{Opened: m.cfg.Now()}
		if err := m.putManifest(ctx, id, mf); err != nil {
			return nil, err
		}
	}
	cfg := m.cfg.Store
	cfg.Namespace, cfg.Topic = Namespace(id), Topic(id)
	cfg.AuthorPolicy = m.refused.policy(id, m.cfg.Store.AuthorPolicy)
	cfg.Carriage = m.refused.carriage(id)
	cfg.Registerer = nil
	cfg.Logger = m.cfg.Store.Logger.With("job", id)
	s, err := crdt.New(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("jobstore: opening the store of job %s: %w", id, err)
	}
	m.open[id], m.meta[id] = s, mf
	m.m.opened.Inc()
	m.m.open.Set(float64(len(m.open)))
	for f := range m.followers {
		f.fn(id, s)
	}
	return s, nil
}

// Follow calls fn with every store open now and, until stop is called,
// with every store opened later. fn runs under the Manager's lock, so that no store opens
// unseen between the two: it must neither block nor call the Manager.
// A store's Done channel closes, and its watches end, when it is dropped
// (Sweep) or the Manager is closed.
func (m *Manager) Follow(fn func(id jobs.ID, s *crdt.Store)) (stop func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range slices.SortedFunc(maps.Keys(m.open), byID) {
		fn(id, m.open[id])
		for _, macro := range slices.Sorted(maps.Keys(m.rooms[id])) {
			fn(id, m.rooms[id][macro])
		}
	}
	if m.closed {
		return func() {}
	}
	f := &follower{fn: fn}
	m.followers[f] = struct{}{}
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.followers, f)
	}
}

// stores returns the stores open now, room stores included.
func (m *Manager) stores() []*crdt.Store {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := slices.Collect(maps.Values(m.open))
	for _, rs := range m.rooms {
		out = slices.AppendSeq(out, maps.Values(rs))
	}
	return out
}

// storesOf returns job id's store and its open room stores (none when
// this node holds no store of the job).
func (m *Manager) storesOf(id jobs.ID) []*crdt.Store {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.open[id]
	if !ok {
		return nil
	}
	return slices.AppendSeq([]*crdt.Store{s}, maps.Values(m.rooms[id]))
}

// Get returns job id's store if this node holds it open.
func (m *Manager) Get(id jobs.ID) (*crdt.Store, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.open[id]
	return s, ok
}

// End notes that job id is over at at (settled, refunded, aborted or
// failed, with its outcome in the mesh store): Sweep drops its store once
// the retention has passed. A job this node holds no store of is ignored.
func (m *Manager) End(ctx context.Context, id jobs.ID, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	mf, ok := m.meta[id]
	if !ok || !mf.Ended.IsZero() || !mf.Dropped.IsZero() {
		return nil
	}
	mf.Ended = at
	if err := m.putManifest(ctx, id, mf); err != nil {
		return err
	}
	m.meta[id] = mf
	return nil
}

// Sweep drops every store whose job ended at least the retention ago, and
// returns the jobs dropped; it forgets the jobs dropped at least
// Config.Forget ago.
func (m *Manager) Sweep(ctx context.Context) ([]jobs.ID, error) {
	m.mu.Lock()
	now := m.cfg.Now()
	var due, forget []jobs.ID
	for id, mf := range m.meta {
		switch {
		case !mf.Dropped.IsZero():
			if now.Sub(mf.Dropped) >= m.cfg.Forget {
				forget = append(forget, id)
			}
		case !mf.Ended.IsZero() && now.Sub(mf.Ended) >= m.cfg.Retention:
			due = append(due, id)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(due, byID)
	var errs []error
	for _, id := range forget {
		if err := m.cfg.Store.Datastore.Delete(ctx, manifestKey(id)); err != nil {
			errs = append(errs, fmt.Errorf("jobstore: forgetting job %s: %w", id, err))
			continue
		}
		m.mu.Lock()
		delete(m.meta, id)
		m.mu.Unlock()
	}
	for _, id := range due {
		if err := m.drop(ctx, id); err != nil {
			errs = append(errs, err)
		}
	}
	return due, errors.Join(errs...)
}

// drop closes job id's store and deletes its DAG blocks and its keys; its
// manifest remembers the drop.
func (m *Manager) drop(ctx context.Context, id jobs.ID) error {
	held := m.storesOf(id)
	var blocks []cid.Cid
	if len(held) > 0 {
		// Listed while the stores are still held, so that a drop that
		// fails here is retried with its blocks.
		for _, s := range held {
			merged, err := s.Merged(ctx)
			if err != nil {
				return fmt.Errorf("jobstore: listing the blocks of job %s: %w", id, err)
			}
			blocks = append(blocks, merged...)
		}
		m.mu.Lock()
		delete(m.open, id)
		delete(m.rooms, id)
		m.m.open.Set(float64(len(m.open)))
		m.mu.Unlock()
		for _, s := range held {
			if err := s.Close(); err != nil {
				m.log.Warn("closing a dropped job store", "job", id, "err", err)
			}
		}
	}
	// A head is also a merged delta, so a block may be listed twice; one
	// that is gone already (deleted here, or by the block GC) is no
	// error. A block that cannot be deleted is left to the block GC,
	// which no longer keeps it: the drop goes on, since a retry would no
	// longer know the dropped store's blocks.
	slices.SortFunc(blocks, func(a, b cid.Cid) int { return strings.Compare(a.KeyString(), b.KeyString()) })
	for _, c := range slices.Compact(blocks) {
		if err := m.cfg.Blocks.DeleteBlock(ctx, c); err != nil && !ipld.IsNotFound(err) {
			m.log.Warn("deleting a block of a dropped job store", "job", id, "block", c, "err", err)
		}
	}
	if err := deletePrefix(ctx, m.cfg.Store.Datastore, Namespace(id)); err != nil {
		return fmt.Errorf("jobstore: deleting the store of job %s: %w", id, err)
	}
	m.mu.Lock()
	mf := m.meta[id]
	mf.Dropped = m.cfg.Now()
	err := m.putManifest(ctx, id, mf)
	if err == nil {
		m.meta[id] = mf
	}
	m.mu.Unlock()
	if err != nil {
		return err
	}
	m.m.dropped.Inc()
	m.log.Info("job store dropped", "job", id, "blocks", len(blocks))
	return nil
}

// Resume reads the manifests an earlier run left: it reopens the stores
// of jobs still running or within their retention, and drops the rest.
func (m *Manager) Resume(ctx context.Context) ([]jobs.ID, error) {
	res, err := m.cfg.Store.Datastore.Query(ctx, query.Query{Prefix: manifestRoot})
	if err != nil {
		return nil, fmt.Errorf("jobstore: listing manifests: %w", err)
	}
	found := map[jobs.ID]manifest{}
	for r := range res.Next() {
		if r.Error != nil {
			res.Close()
			return nil, fmt.Errorf("jobstore: listing manifests: %w", r.Error)
		}
		id, err := jobs.ParseHash(r.Key[strings.LastIndexByte(r.Key, '/')+1:])
		var mf manifest
		if err == nil {
			err = json.Unmarshal(r.Value, &mf)
		}
		if err != nil {
			m.log.Warn("ignoring a malformed job store manifest", "key", r.Key, "err", err)
			continue
		}
		found[id] = mf
	}
	res.Close()
	m.mu.Lock()
	maps.Copy(m.meta, found)
	m.mu.Unlock()
	if _, err := m.Sweep(ctx); err != nil {
		return nil, err
	}
	var reopened []jobs.ID
	for _, id := range slices.SortedFunc(maps.Keys(found), byID) {
		m.mu.Lock()
		mf, kept := m.meta[id]
		m.mu.Unlock()
		if !kept || !mf.Dropped.IsZero() {
			continue
		}
		if _, err := m.Open(ctx, id); err != nil {
			return reopened, err
		}
		for _, macro := range mf.Rooms {
			if _, err := m.OpenRoom(ctx, id, macro); err != nil {
				return reopened, err
			}
		}
		reopened = append(reopened, id)
	}
	return reopened, nil
}

// Merged returns the DAG blocks of every open job store: the block GC
// keeps them with the mesh store's (crdt.Store.Merged).
func (m *Manager) Merged(ctx context.Context) ([]cid.Cid, error) {
	var out []cid.Cid
	for _, s := range m.stores() {
		cs, err := s.Merged(ctx)
		if errors.Is(err, crdt.ErrClosed) {
			continue // dropped meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// Close closes every open job store, which ends their watches, and
// removes the Manager's metrics; the stores' state stays for Resume.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	stores := slices.Collect(maps.Values(m.open))
	for _, rs := range m.rooms {
		stores = slices.AppendSeq(stores, maps.Values(rs))
	}
	m.open, m.rooms = map[jobs.ID]*crdt.Store{}, map[jobs.ID]map[uint64]*crdt.Store{}
	clear(m.followers)
	m.m.open.Set(0)
	m.mu.Unlock()
	var errs []error
	for _, s := range stores {
		errs = append(errs, s.Close())
	}
	m.m.unregister()
	return errors.Join(errs...)
}

func (m *Manager) putManifest(ctx context.Context, id jobs.ID, mf manifest) error {
	b, err := json.Marshal(mf)
	if err != nil {
		return err
	}
	if err := m.cfg.Store.Datastore.Put(ctx, manifestKey(id), b); err != nil {
		return fmt.Errorf("jobstore: writing the manifest of job %s: %w", id, err)
	}
	return nil
}

// byID orders job IDs by their bytes.
func byID(a, b jobs.ID) int { return slices.Compare(a[:], b[:]) }

// deletePrefix deletes every key under prefix.
func deletePrefix(ctx context.Context, ds datastore.Batching, prefix string) error {
	res, err := ds.Query(ctx, query.Query{Prefix: prefix, KeysOnly: true})
	if err != nil {
		return err
	}
	var keys []datastore.Key
	for r := range res.Next() {
		if r.Error != nil {
			res.Close()
			return r.Error
		}
		keys = append(keys, datastore.NewKey(r.Key))
	}
	res.Close()
	b, err := ds.Batch(ctx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := b.Delete(ctx, k); err != nil {
			return err
		}
	}
	return b.Commit(ctx)
}
