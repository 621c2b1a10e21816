package processor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jobmesh/jobmesh/custody"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/fetch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/probe"
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
	// ProgressWindow: a processor says on the Job channel which
	// MicroJobs of a job are complete (those of the rooms it owns, once
	// done, and the verifiers it ran) at most once per window (one
	// message for all of them), and answers the claims and requests for
	// its rooms at most once per window (one answer for all who asked;
	// progress.go). 0 says each at once. Default 1s.
	ProgressWindow time.Duration
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
	// RevealTimeout is how long, after this node saw every regular
	// MicroJob of a job committed, the job's DApp has to reveal its check
	// seed before the verifiers are drawn from the lapse seed instead
	// (finish.ChooseChecks). Default 2m.
	RevealTimeout time.Duration
	// MaxCodeSize and MaxDataSize bound what a job may make this node
	// fetch. Default 64 MiB and 1 GiB.
	MaxCodeSize, MaxDataSize int64
	// Wasm configures the executor. Default wasm.DefaultConfig().
	Wasm wasm.Config
	// Fetch configures the URI fetchers (ipfs:// always goes through the
	// node's block layer). Default fetch.DefaultConfig().
	Fetch fetch.Config
	// Tamper, when set, rewrites block outputs before hashing; check says
	// whether the run checks another's result (a verifier MicroJob or a
	// re-run). A test and demo seam that plays a dishonest processor. Nil
	// in production.
	Tamper func(block uint64, check bool, out []byte) []byte
	// ClaimWallet, when set, names the wallet written in this processor's
	// commitment and disclosure of a MicroJob ("" keeps Wallet): a test
	// seam that plays a processor claiming a wallet not its own. Nil in
	// production.
	ClaimWallet func(micro jobs.ID) string
	// Exec, when set, runs blocks instead of the wazero executor built from
	// Wasm: a GPU executor, or a fixed-cost runner in benchmarks that
	// measure coordination. Default nil.
	Exec wasm.Runner
	// Hold, when set, is called with each MicroJob (and its job) before
	// it runs; the worker waits until it returns. A test seam to stop a
	// processor mid-MicroJob. Nil in production.
	Hold func(ctx context.Context, job, micro jobs.ID)
	// HeadStart is how long, after a job's ranks are first used, an open
	// MacroJob is left to the processor named to open its room
	// (firstOwners); the k-th in rank then claims it and pauses k eighths
	// of HeadStart, at most one (macrojob.DecideOpen). Default 1s.
	HeadStart time.Duration
	// AggregateGrace is how long each holder of a MacroJob's room store
	// waits after the one before it to write the MacroJob's aggregate,
	// once the room's records are complete and the job's store lacks
	// them (aggregate.go). Default 0, which means DefaultAggregateGrace
	// (5s).
	AggregateGrace time.Duration
	// TookGrace is how long a processor's took record of a MacroJob
	// (records.TookKey) may wait, from the run of the first MicroJob it
	// locked there, to go into the store in the batch of that turn's
	// commitments instead of alone (turnTook). A processor killed within
	// it is not counted as a locker of the MacroJob. 0: the record is
	// written alone before that run. Default 5s: the length of most turns
	// of short MicroJobs, and a small part of a room lock's minute.
	TookGrace time.Duration
	// CatchUp is how long after the worker starts on a replica that holds
	// jobs (a restart) a job that it found in its own replica, and that no
	// peer has announced open on the Jobs channel, waits before it is
	// worked; a new node's empty replica holds nothing stale. A restarted
	// node's replica may
	// lack a job's latest records (its verdict, others' commitments) for
	// a store rebroadcast or two; worked from there, a finished job is run
	// again and its settled evidence changes under it. Peers answer the
	// worker's query at start with the jobs they hold open, which are
	// worked at once. Default 50s: two default store rebroadcasts and a
	// DAG walk's wait; the node sets the same of its [store] section.
	CatchUp time.Duration
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
	// Probes is the probe schedule (package probe): this processor
	// challenges once per Window and answers the challenges naming it,
	// and the QoS ledger replays the finished probes. Every node of a
	// mesh must use the same values. Window 0 turns probes off, for tests
	// that want no probe traffic. Default probe.DefaultConfig().
	Probes probe.Config
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{
		CardModel:     "cpu",
		Poll:          2 * time.Second,
		DiscloseGrace: 30 * time.Second,
		// Against MicroJobs of seconds, a second's delay in hearing them
		// complete costs nothing.
		ProgressWindow: time.Second,
		// Ten MicroJobs per ownership turn at most (turnSize asks for
		// fewer as the job ends or when its MicroJobs are slow), run and
		// committed as one batch: fewer handoffs and store deltas.
		Room:          macrojob.RoomConfig{Queue: macrojob.Config{MaxLocksPerTurn: 10}},
		RerunTimeout:  2 * time.Minute,
		RevealTimeout: 2 * time.Minute,
		MaxCodeSize:   64 << 20,
		MaxDataSize:   1 << 30,
		Wasm:          wasm.DefaultConfig(),
		Fetch:         fetch.DefaultConfig(),

		HeadStart:      time.Second,
		TookGrace:      5 * time.Second,
		CatchUp:        50 * time.Second,
		FundingBackoff: 2 * time.Second,
		SettleFallback: time.Minute,
		Dispatch:       dispatch.DefaultConfig(),
		AdvertTTL:      30 * time.Minute,
		StakeTTL:       5 * time.Minute,
		FactsEvery:     5 * time.Second,
		HoldWait:       30 * time.Second,

		MaxInlineVerdict: custody.DefaultMaxInlineVerdict,
		Probes:           probe.DefaultConfig(),
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
	if c.RerunTimeout <= 0 || c.RevealTimeout <= 0 {
		return fmt.Errorf("%w: rerun and reveal timeouts must be positive", ErrInvalidConfig)
	}
	if c.DuplicateGrace < 0 || c.DiscloseGrace < 0 || c.FinalizeTakeover < 0 || c.HoldWait < 0 {
		return fmt.Errorf("%w: grace periods and the hold wait must not be negative", ErrInvalidConfig)
	}
	if c.ProgressWindow < 0 || (c.DiscloseGrace > 0 && c.ProgressWindow > c.DiscloseGrace) {
		return fmt.Errorf("%w: progress window %s must be at least 0 and at most the disclose grace %s", ErrInvalidConfig, c.ProgressWindow, c.DiscloseGrace)
	}
	if c.HeadStart < 0 || c.CatchUp < 0 || c.TookGrace < 0 || c.AggregateGrace < 0 {
		return fmt.Errorf("%w: head start, catch-up, took and aggregate graces must not be negative", ErrInvalidConfig)
	}
	if err := c.Probes.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
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
