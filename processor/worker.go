// Package processor is the processor role of a jobmesh node: it discovers
// jobs on the Jobs channel and in the replicated store, joins or takes
// MacroJob rooms, runs the MicroJobs the room's queue hands it, commits and
// discloses results, answers re-run requests for disputed blocks, and
// finalizes jobs whose every MicroJob is disclosed (seed 004). With a chain
// (Params.Chain) it works only on jobs whose escrow is funded, and settles
// verified jobs on the escrow contract: finalizers propose the settlement
// the verdict implies, payees that derive the same one sign it, and a
// finalizer submits it once a quorum has signed (escrow.go, settlement).
package processor

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/custody"
	"github.com/jobmesh/jobmesh/disclosure"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/fetch"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/groupjob"
	"github.com/jobmesh/jobmesh/ipfs"
	"github.com/jobmesh/jobmesh/jobindex"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
	"github.com/jobmesh/jobmesh/membership"
	"github.com/jobmesh/jobmesh/meshview"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/settlement"
	"github.com/jobmesh/jobmesh/wasm"
)

// ErrInvalidConfig is wrapped by configuration errors.
var ErrInvalidConfig = errors.New("processor: invalid config")

// Config tunes a Worker.
type Config struct {
	// Wallet is the EVM address that receives this processor's pay
	// ("0x" and 40 hex digits). Required.
	Wallet string
	// CardModel and VRAMMiB are this processor's hardware, matched against
	// a job's requirements. Default "cpu" and 0.
	CardModel string
	VRAMMiB   uint64
	// Room configures the MacroJob rooms (queue timeouts, lock TTL).
	// Default: the queue's defaults with a 1m room lock, except
	// MaxLocksPerTurn 10 (the worker takes fewer when its MicroJobs are
	// slow; see turnSize).
	Room macrojob.RoomConfig
	// Poll is how often an idle worker looks for work, and how often
	// pending disclosures and finalization are re-checked. Default 2s.
	Poll time.Duration
	// DiscloseGrace is how long a MicroJob whose MacroJob is fully
	// committed may stay without any disclosure before it is redone by
	// others (its committers stopped between the two rounds). Default 30s.
	DiscloseGrace time.Duration
	// DuplicateGrace is how long a finalizer waits, once every MicroJob
	// has a credited result, for processors that ran a MicroJob twice and
	// have committed but not disclosed yet: their results are judged too,
	// so a wrong duplicate is named even though an honest result already
	// covers its MicroJob. A live processor discloses within a Poll or
	// two of its MacroJob's last commitment; one that never does is
	// neither credited nor waited for longer than this. Default 0, which
	// means three Polls.
	DuplicateGrace time.Duration
	// FinalizeTakeover is how long processors other than a complete job's
	// designated finalizer (see docs/PROTOCOL.md) wait for it, or for any
	// processor ranked above them, to be heard finishing the job before
	// they do it themselves (it may have stopped); the k-th in rank waits
	// k times as long after the job is complete. Default 0, which means
	// ten Polls.
	FinalizeTakeover time.Duration
	// RerunTimeout is how long a processor drawn to re-run a disputed or
	// self-checked block has to store its re-run before another is drawn
	// in its place (it may have stopped); and how long a replicated job's
	// group member may go without any commitment before another member
	// replaces it (groupjob). Default 2m.
	RerunTimeout time.Duration
	// MaxCodeSize and MaxDataSize bound what a job may make this node
	// fetch. Default 64 MiB and 1 GiB.
	MaxCodeSize, MaxDataSize int64
	// Wasm configures the executor. Default wasm.DefaultConfig().
	Wasm wasm.Config
	// Fetch configures the URI fetchers (ipfs:// always goes through the
	// node's block layer). Default fetch.DefaultConfig().
	Fetch fetch.Config
	// Tamper, when set, rewrites block outputs before hashing: a test seam
	// that plays a dishonest processor. Nil in production.
	Tamper func(block uint64, out []byte) []byte
	// ClaimWallet, when set, names the wallet written in this processor's
	// commitment and disclosure of a MicroJob ("" keeps Wallet): a test
	// seam that plays a processor claiming a wallet not its own. Nil in
	// production.
	ClaimWallet func(micro jobs.ID) string
	// Exec, when set, runs blocks instead of the wazero executor built from
	// Wasm: a GPU executor, or a fixed-cost runner in benchmarks that
	// measure coordination. Default nil.
	Exec wasm.Runner
	// Hold, when set, is called with each MicroJob before it runs; the
	// worker waits until it returns. A test seam to stop a processor
	// mid-MicroJob. Nil in production.
	Hold func(ctx context.Context, micro jobs.ID)
	// HeadStart is how long, after a job's ranks are first used, an open
	// MacroJob is left to the processor named to open its room
	// (firstOwners); the k-th in rank then claims it and pauses k eighths
	// of HeadStart, at most one (macrojob.DecideOpen). Default 1s.
	HeadStart time.Duration
	// FundingBackoff is the first wait before an unfunded job's escrow is
	// read again; it doubles up to 32 times this. Default 2s.
	FundingBackoff time.Duration
	// SettleFallback is how long a member that signed waits, once it
	// sees a quorum of signatures, before it submits settle itself though
	// it is no finalizer (the finalizers may be gone). Default 1m.
	SettleFallback time.Duration
	// SkipJoin makes the processor work on funded jobs without joining
	// their escrow: a test seam that plays a processor outside a job's
	// members. False in production.
	SkipJoin bool
	// Dispatch are the mesh's dispatching, pricing and QoS parameters (job
	// order by task value, queue cap, QoS scoring, weighted choices). Every
	// node of a mesh must use the same values. Default
	// dispatch.DefaultConfig().
	Dispatch dispatch.Config
	// AdvertTTL is how old a processor advertisement may be for its
	// processor to count as live (dispatch weights, queue cap). Default
	// 30m, three times the node's default advertisement refresh.
	AdvertTTL time.Duration
	// StakeTTL is how long a stake read from the escrow is reused before
	// it is read again. Default 5m.
	StakeTTL time.Duration
	// FactsEvery is how often the dispatch view (live processors, stakes,
	// QoS, weights) is refreshed from the store. Default 5s.
	FactsEvery time.Duration
	// BeforeSettle, when set, is called once a quorum has signed, before
	// this processor submits settle (fallback: it steps in after
	// SettleFallback rather than as a finalizer); false skips submitting
	// this time (it is asked again on the next pass). A test seam to make
	// submitters race or stay away. Nil in production.
	BeforeSettle func(job jobs.ID, fallback bool) bool
	// BeforeVerdict, when set, is called before this processor writes its
	// verdict of a job; false skips writing it this time (it is asked
	// again on a later pass). A test seam to order a forged verdict
	// before the finalizer's. Nil in production.
	BeforeVerdict func(job jobs.ID) bool
	// HoldWait is how long the finalizer of a job, holding the output it
	// assembled, waits for a second node to hold the same output before
	// it writes the verdict (custody.Keeper.HandedOff): the creator's
	// node when it is connected to this one, otherwise any other node
	// (the runner-up finalizer assembles it for that). After HoldWait,
	// counted from its own holder record, it writes the verdict anyway,
	// logged and counted. 0: it does not wait. Default 30s.
	HoldWait time.Duration
	// MaxInlineVerdict is the largest encoded verdict record written
	// inline; a larger one keeps its verdict and rounds in a body document
	// on IPFS (docs/PROTOCOL.md), so big jobs stay under the store's
	// payload limit. Default 192 KiB; 0 means the default.
	MaxInlineVerdict int
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{
		CardModel:     "cpu",
		Poll:          2 * time.Second,
		DiscloseGrace: 30 * time.Second,
		// Ten MicroJobs per ownership turn at most (turnSize asks for
		// fewer as the job ends or when its MicroJobs are slow), run and
		// committed as one batch: fewer handoffs and store deltas.
		Room:         macrojob.RoomConfig{Queue: macrojob.Config{MaxLocksPerTurn: 10}},
		RerunTimeout: 2 * time.Minute,
		MaxCodeSize:  64 << 20,
		MaxDataSize:  1 << 30,
		Wasm:         wasm.DefaultConfig(),
		Fetch:        fetch.DefaultConfig(),

		HeadStart:      time.Second,
		FundingBackoff: 2 * time.Second,
		SettleFallback: time.Minute,
		Dispatch:       dispatch.DefaultConfig(),
		AdvertTTL:      30 * time.Minute,
		StakeTTL:       5 * time.Minute,
		FactsEvery:     5 * time.Second,
		HoldWait:       30 * time.Second,

		MaxInlineVerdict: custody.DefaultMaxInlineVerdict,
	}
}

// Validate checks the config.
func (c Config) Validate() error {
	if _, err := microjob.ParseWallet(c.Wallet); err != nil {
		return fmt.Errorf("%w: wallet: %w", ErrInvalidConfig, err)
	}
	if c.Poll <= 0 || c.MaxCodeSize <= 0 || c.MaxDataSize <= 0 || c.FundingBackoff <= 0 || c.SettleFallback <= 0 ||
		c.AdvertTTL <= 0 || c.StakeTTL <= 0 || c.FactsEvery <= 0 {
		return fmt.Errorf("%w: poll, size limits and TTLs must be positive", ErrInvalidConfig)
	}
	if err := c.Dispatch.Validate(); err != nil {
		return fmt.Errorf("%w: dispatch: %w", ErrInvalidConfig, err)
	}
	if c.RerunTimeout <= 0 {
		return fmt.Errorf("%w: rerun timeout must be positive", ErrInvalidConfig)
	}
	if c.DuplicateGrace < 0 || c.DiscloseGrace < 0 || c.FinalizeTakeover < 0 || c.HoldWait < 0 {
		return fmt.Errorf("%w: grace periods and the hold wait must not be negative", ErrInvalidConfig)
	}
	if c.HeadStart < 0 {
		return fmt.Errorf("%w: head start must not be negative", ErrInvalidConfig)
	}
	if err := c.custody().Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	// Every room would refuse it: say so at start, not at each join.
	if err := c.Room.Validate(); err != nil {
		return fmt.Errorf("%w: room: %w", ErrInvalidConfig, err)
	}
	return nil
}

// Params are the node parts a Worker uses; it closes none of them.
type Params struct {
	Host       *p2p.Host
	Blocks     *ipfs.Node
	Store      *crdt.Store
	Logger     *slog.Logger
	Registerer prometheus.Registerer
	// Chain, when set, is the escrow this processor settles jobs on; it
	// then works only on funded jobs. Nil: verdicts only.
	Chain *escrow.Client
	// WalletKey signs settlements; its address must be Config.Wallet.
	// Required with Chain.
	WalletKey *ecdsa.PrivateKey
	// Directory lists the advertised processors, for dispatch weights and
	// the queue cap. Nil: no processor is known; choices are uniform.
	Directory meshview.Directory
}

// Worker is one processor's share of the mesh's work.
type Worker struct {
	cfg    Config
	p      Params
	self   string
	log    *slog.Logger
	exec   wasm.Runner
	closer func(context.Context) error
	runner *microjob.Runner
	fetch  *fetch.Registry
	topic  *p2p.Topic[jobs.ChannelMsg]
	m      *metrics
	// index holds each followed job's records; writer writes through it.
	index  *jobindex.Index
	writer jobindex.Writer
	// joiner admits this processor to funded jobs, and settler settles
	// finished ones, on the chain (nil without one).
	joiner  *membership.Joiner
	settler *settlement.Settler
	// custody keeps the outputs of the jobs this processor finishes.
	custody *custody.Keeper

	facts *meshview.Facts
	// wallets is the verified view of the wallet bindings.
	wallets *membership.Wallets
	// members is the view of who joined which job's escrow.
	members *membership.View

	groups *groupjob.Groups // replicated jobs' groups
	// dview is the latest Facts snapshot; choices made inside a room's
	// queue read it without waiting for the store.
	dview atomic.Pointer[meshview.View]
	// refresh asks keepFacts for a new view now (refreshSoon).
	refresh chan struct{}
	// grewAt is when (Unix nanoseconds) the dispatch view last gained a
	// processor, or was first taken: until HeadStart after it, the view
	// may still disagree with the others' (rankedAt).
	grewAt atomic.Int64

	mu    sync.Mutex
	known map[jobs.ID]*jobState
	// stops counts the ends of waits for a room's queue that were asked
	// for (stopWaitsLocked, a verdict), so that a wait begun after one
	// that came while the worker was still joining the room is ended too
	// (beginWait); guarded by mu.
	stops uint64
	rooms map[macrojob.RoomID]*macrojob.Room
	// doneRooms are rooms left because their queue was done, and when.
	doneRooms map[macrojob.RoomID]time.Time
	wake      chan struct{}
	// discl are the disclosures of MicroJobs this node committed, until
	// their MacroJob is fully committed.
	discl disclosure.Pending

	runCtx context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

type jobState struct {
	learnedAt time.Time // when this worker discovered the job
	rankedAt  time.Time // when its ranks were first used (Worker.rankedAt)
	// stopWait ends the worker's wait for work from one of the job's
	// rooms, once the job has a verdict.
	stopWait   context.CancelFunc
	info       *jobs.JobInfo
	plan       *jobs.Plan
	code, data []byte
	failed     time.Time     // last fetch or run failure, for backoff
	runTime    time.Duration // moving average of this worker's MicroJob runs (turnSize)
	eligible   int           // processors eligible for the job in the last view (firstOwners)
	complete   time.Time     // when this node first saw every MicroJob with a result
	// standbyUntil: another processor is finishing the job (finalizer.go);
	// this one does not judge it again before then.
	standbyUntil time.Time
	// finishing: this processor is finishing the job and says so on the
	// Job channel; saidFinalizing is when it last did (others hear it in
	// their hints).
	finishing      bool
	saidFinalizing time.Time
	mine           map[jobs.ID]bool // MicroJobs this node committed
	finished       bool             // a verdict exists
	aborted        bool             // a JobAborted record exists: nobody works on it
	// topic is the Job channel, joined when the node first works on the
	// job; announced are the rooms heard of there.
	topic     *p2p.Topic[jobs.ChannelMsg]
	announced map[uint64]roomSeen

	cancelled bool // a valid cancel record is in the store
	finalizer bool // this processor wrote the verdict
	chainDone bool // settled on chain (by anyone), or not settleable

	// judgedVer and judgedAt are the record index version and the time of
	// the last judgement, judgeCost how long it took to read the records
	// and judge them; graceWait: it found the job complete and is waiting
	// out DiscloseGrace, so it must be judged again unchanged.
	judgedVer uint64
	judgedAt  time.Time
	judgeCost time.Duration
	graceWait bool
	// silentSince is, for each MicroJob of a fully committed MacroJob
	// without any disclosure, when this node first saw it so (redoSilent).
	silentSince map[string]time.Time
	// hints are what was heard on the Job channel: MicroJobs heard
	// complete, by whom and when (heardDone), and who is finishing the
	// job (standby).
	hints finish.Hints
	// doneMap is roomCommitted's last answer for a non-replicated job,
	// derived at doneAt; callers must not modify it.
	doneMap map[jobs.ID]bool
	doneAt  time.Time
	// redoRanks is this processor's place among those that may redo each
	// redo request (by MicroJob and exclusions), for the dispatch view
	// redoView.
	redoRanks map[string]int
	redoView  *meshview.View
	// requestsVer and requestsAt are the record index version and the
	// time of the last pass over the job's redo, dispute and self-check
	// requests (doRedos, doReruns).
	requestsVer [2]uint64
	requestsAt  [2]time.Time
	// redoSeen is when this node first saw each redo request of a
	// MicroJob that is not its turn to redo yet (redoTurn).
	redoSeen map[string]time.Time
	// rerunSeen is when this node first saw each re-run request
	// (rerunOverdue).
	rerunSeen map[string]time.Time
	// verdicts is what this node found of the job's verdicts and
	// requests (finalizer.go, audit.go).
	verdicts verdictState

	// owners name each MacroJob's first owner (firstOwners), derived
	// from the processor list of version ownersVer.
	owners     []string
	ownersView *meshview.View
	// openRank is, for each MacroJob, this processor's place in the
	// order owners heads (macrojob.OpenInput.Rank).
	openRank []int
	// claims are, for each MacroJob, the processors heard claiming its
	// room on the Job channel, and when (claimsOf).
	claims map[uint64]map[string]time.Time
	// verifiers rank, for each MacroJob, who runs its verifier MicroJob
	// outside the room (finish.VerifierRunners), derived with owners.
	verifiers [][]string
}

// duplicateGrace is Config.DuplicateGrace with its default applied.
func (c Config) duplicateGrace() time.Duration {
	if c.DuplicateGrace > 0 {
		return c.DuplicateGrace
	}
	return 3 * c.Poll
}

// finalizeTakeover is Config.FinalizeTakeover with its default applied.
func (c Config) finalizeTakeover() time.Duration {
	if c.FinalizeTakeover > 0 {
		return c.FinalizeTakeover
	}
	return 10 * c.Poll
}

// custody is the part of the config the output's keeper uses.
func (c Config) custody() custody.Config {
	return custody.Config{HoldWait: c.HoldWait, MaxInlineVerdict: c.MaxInlineVerdict}
}

// custodyParams are the node parts the output's keeper uses.
func (w *Worker) custodyParams() custody.Params {
	p := custody.Params{Store: w.p.Store, Writer: w.writer, Logger: w.log, SingleHolder: w.m.lonelyVerdicts}
	if w.p.Blocks != nil {
		p.Blocks = w.p.Blocks
	}
	if w.p.Host != nil {
		p.Network = w.p.Host
	}
	return p
}

// New starts a Worker. Close stops it.
func New(ctx context.Context, p Params, cfg Config) (*Worker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkChainParams(p, cfg); err != nil {
		return nil, err
	}
	log := p.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("subsystem", "processor")
	var exec wasm.Runner = cfg.Exec
	closer := func(context.Context) error { return nil }
	if exec == nil {
		e, err := wasm.New(cfg.Wasm, log)
		if err != nil {
			return nil, err
		}
		exec, closer = e, e.Close
	}
	runner, err := microjob.NewRunner(microjob.Config{Exec: exec, Blocks: p.Blocks, Logger: log, Registerer: p.Registerer, Tamper: cfg.Tamper})
	if err != nil {
		closer(ctx)
		return nil, err
	}
	fcfg := cfg.Fetch
	fcfg.IPFS = p.Blocks
	fetcher, err := fetch.New(fcfg)
	if err != nil {
		closer(ctx)
		return nil, err
	}
	topic, err := jobs.JoinJobsTopic(p.Host)
	if err != nil {
		closer(ctx)
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	index := jobindex.New(p.Store)
	// The watch starts before anything is read, so the index misses no
	// change made after a job's records were first queried.
	changes := p.Store.Watch(runCtx, records.JobsPrefix)
	w := &Worker{index: index, writer: index.Writer(),
		cfg: cfg, p: p, self: p.Host.ID().String(), log: log, exec: exec, closer: closer, runner: runner,
		fetch: fetcher, topic: topic, m: newMetrics(p.Registerer),
		known: map[jobs.ID]*jobState{}, rooms: map[macrojob.RoomID]*macrojob.Room{},
		doneRooms: map[macrojob.RoomID]time.Time{}, discl: disclosure.Pending{Hold: cfg.Poll},
		wake: make(chan struct{}, 1), refresh: make(chan struct{}, 1), runCtx: runCtx, cancel: cancel,
	}
	w.custody, err = custody.New(runCtx, w.custodyParams(), cfg.custody())
	if err != nil {
		cancel()
		closer(ctx)
		topic.Close()
		return nil, err
	}
	var stakes meshview.StakeReader
	if p.Chain != nil {
		stakes = p.Chain
	}
	w.facts, err = meshview.NewFacts(meshview.FactsParams{Store: p.Store, Directory: p.Directory, Stakes: stakes, Blocks: w.custody.Bodies(), Logger: log},
		meshview.FactsConfig{Dispatch: cfg.Dispatch, AdvertTTL: cfg.AdvertTTL, StakeTTL: cfg.StakeTTL, HistoryJobs: meshview.DefaultFactsConfig().HistoryJobs})
	if err == nil {
		w.groups, err = groupjob.New(groupjob.Params{Self: w.self, Records: p.Store, Writer: w.writer, Progress: index,
			Views: &w.dview, Logger: log, Registerer: p.Registerer},
			groupjob.Config{CardModel: cfg.CardModel, VRAMMiB: cfg.VRAMMiB, SilentAfter: cfg.RerunTimeout})
	}
	if err != nil {
		cancel()
		closer(ctx)
		topic.Close()
		return nil, err
	}
	if err := w.startEscrow(ctx, runCtx); err != nil {
		cancel()
		closer(ctx)
		topic.Close()
		return nil, err
	}
	if w.cfg.Room.Queue.Chooser == nil {
		w.cfg.Room.Queue.Chooser = weightedChooser{w}
	}
	index.OnChange(w.poke)
	nodes := p.Store.Watch(runCtx, records.NodesPrefix)
	w.wg.Add(6)
	go w.keepFacts(runCtx)
	go w.watchNodes(runCtx, nodes)
	go func() {
		defer w.wg.Done()
		// A watch that overflowed may have dropped a request for work:
		// look, as for a request seen.
		index.Run(changes, w.noticeRecord, w.interruptWaits)
	}()
	go w.listen(runCtx)
	go w.work(runCtx)
	go w.settle(runCtx)
	// Ask the mesh for open jobs now; the store may lag.
	_ = topic.Publish(ctx, jobs.ChannelMsg{Kind: jobs.KindQuery})
	return w, nil
}

// Close stops the worker and leaves its rooms and channel.
func (w *Worker) Close() error {
	w.once.Do(func() {
		w.cancel()
		w.wg.Wait()
		w.custody.Close()
		w.mu.Lock()
		for _, r := range w.rooms {
			r.Close()
		}
		for _, js := range w.known {
			if js.topic != nil {
				js.topic.Close()
			}
		}
		w.mu.Unlock()
		w.topic.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		w.closer(ctx)
	})
	return nil
}

func (w *Worker) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// listen handles the Jobs channel: job announcements, queries for open
// jobs, and progress.
func (w *Worker) listen(ctx context.Context) {
	defer w.wg.Done()
	for {
		m, err := w.topic.Next(ctx)
		if err != nil {
			return
		}
		switch m.Value.Kind {
		case jobs.KindJob:
			info, err := jobs.Decode(m.Value.Job)
			if err == nil {
				w.learn(info)
			}
		case jobs.KindQuery:
			if !m.Local {
				w.announceOpen(ctx)
			}
		case jobs.KindProgress:
			w.poke()
		}
	}
}

// announceOpen answers a query with every job this node knows unfinished.
func (w *Worker) announceOpen(ctx context.Context) {
	w.mu.Lock()
	var open []*jobs.JobInfo
	for _, js := range w.known {
		if !js.finished {
			open = append(open, js.info)
		}
	}
	w.mu.Unlock()
	for _, info := range open {
		_ = w.topic.Publish(ctx, jobs.ChannelMsg{Kind: jobs.KindJob, Job: info.Encode()})
	}
}

// refreshSoon asks for a new dispatch view now, outside the FactsEvery
// rhythm; asks made while one is being taken give one more after it.
func (w *Worker) refreshSoon() {
	select {
	case w.refresh <- struct{}{}:
	default:
	}
}

// learn records a job seen on the channel or in the store.
func (w *Worker) learn(info *jobs.JobInfo) {
	id := info.ID()
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.known[id]; ok {
		return
	}
	plan, err := jobs.Slice(info)
	if err != nil {
		w.log.Warn("ignoring a job that does not slice", "job", id, "err", err)
		return
	}
	w.known[id] = &jobState{info: info, plan: plan, learnedAt: time.Now()}
	w.log.Info("job discovered", "job", id, "microjobs", plan.NumMicroJobs(), "macrojobs", len(plan.Macros))
	// A worker waiting in a room comes back to run the new job's
	// verifier MicroJobs due here (verifiers.go).
	w.stopWaitsLocked()
	w.poke()
}

// jobLevelKey reports whether key is a job's own record or one directly
// under it (verdict, aborted, ...), not one of its MicroJobs' records.
func jobLevelKey(key string) bool {
	rest, ok := strings.CutPrefix(key, records.JobsPrefix+"/")
	return ok && strings.Count(rest, "/") <= 1
}

// syncKnown reads jobs and verdicts from the store, which catches what the
// channel and the watch missed (a watch overflow, records that arrived
// before the worker started).
func (w *Worker) syncKnown(ctx context.Context) {
	recs, err := w.p.Store.QueryKeys(ctx, records.JobsPrefix, jobLevelKey)
	if err != nil {
		return
	}
	for _, r := range recs {
		w.noticeRecord(r)
	}
}

// noticeRecord learns a job from its JobInfo record; other records are
// ignored. (A verdict finishes a job only once this node's judgement
// agrees with it: finalize, which every store change wakes.)
func (w *Worker) noticeRecord(r crdt.Record) {
	switch r.Type {
	case records.JobType:
		if info, err := jobs.Decode(r.Payload); err == nil && records.JobKey(info.ID()) == r.Key {
			w.learn(info)
		}
	case records.AbortedType:
		if k, err := records.Parse(r.Key); err == nil && k.Type == records.AbortedType {
			if _, err := records.DecodeJobAborted(r.Key, r.Payload); err == nil {
				w.markAborted(k.Job)
			}
		}
	case records.DisputeType, records.CheckType, records.RedoType:
		w.interruptWaits()
	}
}

// interruptWaits is for work asked of some processor outside the queues
// (a dispute, a self-check, a redo): a worker waiting for a room's queue
// (up to a processing timeout and four owner timeouts) stops waiting and
// looks, so that a re-run or redo does not sit behind a quiet room.
func (w *Worker) interruptWaits() {
	w.mu.Lock()
	w.stopWaitsLocked()
	w.mu.Unlock()
	w.poke()
}

// stopWaitsLocked ends the worker's wait for a room's queue, whichever
// job's room it is. w.mu is held.
func (w *Worker) stopWaitsLocked() {
	w.stops++
	for _, js := range w.known {
		if js.stopWait != nil {
			js.stopWait()
		}
	}
}

// waitMark is where the stops stand now: a step takes it before it
// chooses a job and a room, and hands it to beginWait.
func (w *Worker) waitMark() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stops
}

// beginWait makes cancel the end of the worker's wait for a room of js,
// and calls it at once when the wait is already over: js has its verdict,
// or a stop was asked for since mark (a new job, a request for work
// outside the queues) while the worker chose and joined the room. Before,
// such a stop found no wait to end, and the worker then waited out a
// processing timeout and four owner timeouts in the room of a finished
// job while a new job ran without it.
func (w *Worker) beginWait(js *jobState, mark uint64, cancel context.CancelFunc) {
	w.mu.Lock()
	js.stopWait = cancel
	over := js.finished || w.stops != mark
	w.mu.Unlock()
	if over {
		cancel()
	}
}

// selfNode is this processor as dispatching sees it.
func (w *Worker) selfNode() dispatch.Node {
	return dispatch.Node{ID: w.self, CardModel: w.cfg.CardModel, VRAM: w.cfg.VRAMMiB}
}

// candidates returns the unfinished jobs this processor can serve, in the
// order it takes them (orderJobs: best task value first among the queue
// groups it serves).
func (w *Worker) candidates(now time.Time) []*jobState {
	if w.dview.Load().Kicked(w.self) {
		// Kicked out by the QoS rules: the mesh ignores this processor's
		// requests, so it does not make any.
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*jobState
	for _, js := range w.known {
		if js.finished || js.aborted || now.Sub(js.failed) < 30*time.Second {
			continue
		}
		out = append(out, js)
	}
	return orderJobs(w.cfg.Dispatch, w.selfNode(), out)
}

// Channel is the Jobs channel the worker joined. A DApp on the same node
// publishes its jobs through it: a host joins a topic only once.
func (w *Worker) Channel() *p2p.Topic[jobs.ChannelMsg] { return w.topic }
