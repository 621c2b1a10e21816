package processor

import (
	"context"
	"crypto/ecdsa"
	"log/slog"
	"maps"
	"slices"
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
	"github.com/jobmesh/jobmesh/probe"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/settlement"
	"github.com/jobmesh/jobmesh/wasm"
)

// Params are the node parts a Worker uses; it closes none of them.
type Params struct {
	Host       *p2p.Host
	Blocks     *ipfs.Node
	Store      crdt.Replicated
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
	// Jobs, when set, is where this processor takes part in a job's own
	// records: it joins the store of every job it could serve (card
	// model, VRAM, per-block limits) and whose deadline is ahead as it
	// learns of it, so that it reads
	// the job's rooms, requests and verdicts. Nil: one store holds every
	// job's records.
	Jobs Joiner
	// Rooms, when set, keeps each MacroJob's room records in a store of
	// its own (jobstore.Manager with room stores): this processor opens
	// the room store of each room it joins and writes the MacroJob's
	// aggregates from it (aggregate.go). Nil: room records go to the
	// job's store.
	Rooms RoomStores
	// Now is the clock every decision of the worker and its parts reads
	// (lock expiry, head starts, waits, takeovers); nil: time.Now. Tests
	// inject one to drive time.
	Now func() time.Time
}

// Joiner joins a job's store (jobstore.Router).
type Joiner interface {
	Join(ctx context.Context, id jobs.ID) error
	// Holds reports whether this node holds job id's store.
	Holds(id jobs.ID) bool
}

// now is the worker's clock (Params.Now).
func (w *Worker) now() time.Time {
	if w.p.Now != nil {
		return w.p.Now()
	}
	return time.Now()
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
	stakers *membership.Stakers // with a chain: who may re-run a job's blocks
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
	// caughtUp is when the worker's catch-up ends (Config.CatchUp): its
	// start where its replica held no job then (a new node: nothing in it
	// is stale), else its start plus the catch-up.
	caughtUp time.Time

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
	// catchUpUntil: the job came from this node's replica while it was
	// catching up (Config.CatchUp) and no peer has announced it open; it
	// is not worked before then.
	catchUpUntil time.Time
	// askJoined: an ask record named this processor and it joined the
	// job's store (asks.go).
	askJoined bool
	// overLimitsSaid: the worker logged that the job asks for more per
	// block than it allows (limits.go).
	overLimitsSaid bool
	rankedAt       time.Time // when its ranks were first used (Worker.rankedAt)
	// stopWait ends the worker's wait for work from one of the job's
	// rooms, once the job has a verdict.
	stopWait context.CancelFunc
	info     *jobs.JobInfo
	// cur is the job's plan (plan): public until its checks are drawn,
	// then checked (drawChecks). Read from every goroutine of the worker.
	cur        atomic.Pointer[jobs.Plan]
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
	took           map[uint64]bool  // MacroJobs with this node's took record (writeTook)
	finished       bool             // a verdict exists
	aborted        bool             // a JobAborted record exists: nobody works on it
	fail           failState        // its failure reports and this node's failed runs (failed.go)
	// topic is the Job channel, joined when the node first works on the
	// job; announced are the rooms heard of there.
	topic     *p2p.Topic[jobs.ChannelMsg]
	announced map[uint64]roomSeen
	// leftSeen is, per MacroJob, how many of its MicroJobs were left
	// without a commitment and since when (leftSince).
	leftSeen map[uint64]leftSeen
	// progress is the MicroJobs of the done rooms this node owns, and
	// the verifiers it ran, not said yet on the Job channel; said the
	// MacroJobs whose rooms it said done (roomSettled); asked the peers
	// that asked there for the job's rooms and have no answer yet
	// (progress.go).
	progress windowBatch
	said     map[uint64]bool
	asked    windowBatch

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
	// rankProcs are the processors that may run a verifier outside its
	// room, derived with owners; verifiers rank them, for each MacroJob,
	// to run its verifier MicroJob (verifierRanks), from the commitments
	// whose digest is verifiersRan.
	rankProcs    []string
	verifiers    [][]string
	verifiersRan uint64

	// checks is where the verifiers of plan come from (checks.go);
	// regularsAt is when this node first saw every regular MicroJob
	// committed, checksAt when it drew the checks; revealsSeen are the
	// reveal records it counted; revealsTried is how many reveal records
	// the index held when a lapsed job last looked for one that counts.
	checks       finish.CheckSource
	regularsAt   time.Time
	checksAt     time.Time
	revealsSeen  map[string]bool
	revealsTried int

	// aggSeen is what this node noted of the aggregates of the MacroJobs
	// whose room stores it holds (aggregate.go).
	aggSeen map[aggAt]aggSeen
	// aggQuiet is the record index version at which the job store last
	// lacked no record of this node's room stores of the job.
	aggQuiet uint64
	// roomQuiet is, per MacroJob, the room store's Changes at which the
	// job store last lacked none of its records.
	roomQuiet map[uint64]uint64
}

// plan is the job's plan: public until its checks are drawn, then
// checked.
func (js *jobState) plan() *jobs.Plan { return js.cur.Load() }

// withPlan sets js's plan and returns js.
func (js *jobState) withPlan(p *jobs.Plan) *jobState {
	js.cur.Store(p)
	return js
}

// custodyParams are the node parts the output's keeper uses.
func (w *Worker) custodyParams() custody.Params {
	p := custody.Params{Store: w.p.Store, Writer: w.writer, Logger: w.log, SingleHolder: w.m.lonelyVerdicts, Now: w.p.Now}
	if w.p.Blocks != nil {
		p.Blocks = w.p.Blocks
	}
	if w.p.Host != nil {
		p.Network = w.p.Host
	}
	return p
}

// startParts builds the parts the worker hands work to: the keeper of
// finished jobs' outputs, the mesh view, the group-job role and, with a
// chain, the escrow's membership and settlement.
func (w *Worker) startParts(ctx, runCtx context.Context) error {
	var err error
	if w.custody, err = custody.New(runCtx, w.custodyParams(), w.cfg.custody()); err != nil {
		return err
	}
	var stakes meshview.StakeReader
	var settled meshview.Settlements
	var rules finish.Rules
	if w.p.Chain != nil {
		stakes, settled = w.p.Chain, w.p.Chain
		w.stakers = membership.NewStakers(w.p.Chain)
		rules = membership.ReaderRules(w.p.Store, membership.NewMembers(w.p.Chain, w.cfg.FundingBackoff), w.stakers)
	}
	w.facts, err = meshview.NewFacts(meshview.FactsParams{Store: w.p.Store, Directory: w.p.Directory, Stakes: stakes, Settlements: settled, Blocks: w.custody.Bodies(), Rules: rules, Logger: w.log, Now: w.p.Now},
		meshview.FactsConfig{Dispatch: w.cfg.Dispatch, AdvertTTL: w.cfg.AdvertTTL, StakeTTL: w.cfg.StakeTTL, HistoryJobs: meshview.DefaultFactsConfig().HistoryJobs, Probes: w.cfg.Probes})
	if err != nil {
		return err
	}
	w.groups, err = groupjob.New(groupjob.Params{Self: w.self, Records: w.p.Store, Writer: w.writer, Progress: w.index,
		Views: &w.dview, Logger: w.log, Registerer: w.p.Registerer, Now: w.p.Now},
		groupjob.Config{CardModel: w.cfg.CardModel, VRAMMiB: w.cfg.VRAMMiB, SilentAfter: w.cfg.RerunTimeout})
	if err != nil {
		return err
	}
	return w.startEscrow(ctx, runCtx)
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
		wcfg := cfg.Wasm
		if wcfg.Registerer == nil {
			wcfg.Registerer = p.Registerer
		}
		e, err := wasm.New(wcfg, log)
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
	w.caughtUp = w.now()
	if held, err := p.Store.QueryKeys(ctx, records.JobsPrefix, jobInfoKey); err != nil || len(held) > 0 {
		w.caughtUp = w.caughtUp.Add(cfg.CatchUp)
	}
	if err := w.startParts(ctx, runCtx); err != nil {
		cancel()
		if w.custody != nil {
			w.custody.Close()
		}
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
	if w.cfg.Probes.Enabled() {
		w.wg.Add(1)
		go w.probeLoop(runCtx, p.Store.Watch(runCtx, probe.Prefix))
	}
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
		// The rooms and topics are closed outside the lock: a room's loop
		// may be waiting for it (the queue's avoidSelfCheck), and Close
		// waits for that loop.
		w.mu.Lock()
		rooms := slices.Collect(maps.Values(w.rooms))
		var topics []*p2p.Topic[jobs.ChannelMsg]
		for _, js := range w.known {
			if js.topic != nil {
				topics = append(topics, js.topic)
			}
		}
		w.mu.Unlock()
		for _, r := range rooms {
			r.Close()
		}
		for _, t := range topics {
			t.Close()
		}
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

// Channel is the Jobs channel the worker joined. A DApp on the same node
// publishes its jobs through it: a host joins a topic only once.
func (w *Worker) Channel() *p2p.Topic[jobs.ChannelMsg] { return w.topic }
