// Package custody keeps a finished job's output available: it brings the
// accepted results into this node's block store before the output is
// assembled (prefetch.go), assembles the output, pins it and writes the
// holder record that says this node holds it (holders.go), hands it to a
// second node before the verdict is written (handoff.go), and stores a
// verdict too large to write inline as a body on IPFS (verdictbody.go).
//
// A Keeper is driven by the processor's finishing loop; it reads the
// store and the block layer but decides nothing about the verdict itself.
// Its per-job state has its own lock, which is never held while it calls
// out (store, block layer, network, or the callbacks it is given).
package custody

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
)

// Store is what the Keeper reads of the replicated store: the job's
// JobInfo and holder records. *crdt.Store satisfies it.
type Store interface {
	Get(ctx context.Context, key string) (crdt.Record, error)
	Query(ctx context.Context, prefix string) ([]crdt.Record, error)
	// Self is this node.
	Self() peer.ID
}

// Blocks is the block layer that holds the output: results are stored
// and fetched there, the output assembled and pinned, a verdict body
// added. *ipfs.Node satisfies it.
type Blocks interface {
	microjob.OutputStore
	Pin(ctx context.Context, c cid.Cid, owner string) error
	PutBlocks(ctx context.Context, bs []blocks.Block) error
}

// Network reaches the peers that hold results and tells whether a peer is
// connected. *p2p.Host satisfies it.
type Network interface {
	Reach(ctx context.Context, id peer.ID) error
	Connected(id peer.ID) bool
}

var _ Store = (*crdt.Store)(nil)

// ErrInvalidConfig is wrapped by configuration errors.
var ErrInvalidConfig = errors.New("custody: invalid config")

// Config tunes a Keeper.
type Config struct {
	// HoldWait is how long the finalizer of a job, holding the output it
	// assembled, waits for a second node to hold the same output before
	// it writes the verdict (handoff.go). 0: it does not wait. Default
	// 30s.
	HoldWait time.Duration
	// MaxInlineVerdict is the largest encoded verdict record written
	// inline; a larger one keeps its verdict and rounds in a body
	// document on IPFS. Default DefaultMaxInlineVerdict; 0 means the
	// default.
	MaxInlineVerdict int
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{HoldWait: 30 * time.Second, MaxInlineVerdict: DefaultMaxInlineVerdict}
}

// Validate checks the config.
func (c Config) Validate() error {
	if c.HoldWait < 0 {
		return fmt.Errorf("%w: the hold wait must not be negative", ErrInvalidConfig)
	}
	if c.MaxInlineVerdict < 0 {
		return fmt.Errorf("%w: max inline verdict must not be negative", ErrInvalidConfig)
	}
	return nil
}

// Params are the node parts a Keeper uses; it closes none of them.
type Params struct {
	// Store is required.
	Store Store
	// Writer writes the holder records. Required.
	Writer crdt.Writer
	// Blocks is the block layer. Nil: nothing is held, prefetched or
	// handed off, and a verdict body cannot be stored.
	Blocks Blocks
	// Network reaches result holders and tells whether the creator's
	// node is connected. Nil: none is reached or connected.
	Network Network
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// SingleHolder, when set, counts verdicts written with no second
	// node holding the output.
	SingleHolder prometheus.Counter
	// Now is the clock of the handoff waits; nil: time.Now.
	Now func() time.Time
}

// Keeper keeps the outputs of the jobs this node finishes.
type Keeper struct {
	cfg  Config
	p    Params
	self peer.ID
	log  *slog.Logger
	// ctx bounds the background prefetches; wg waits for them.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once

	mu   sync.Mutex
	jobs map[jobs.ID]*jobCustody
}

// jobCustody is what the Keeper knows of one job; guarded by Keeper.mu.
type jobCustody struct {
	// outputs are this node's assemblies, by the SHA-256 of the verdict.
	outputs map[[32]byte]cid.Cid
	// prefetched is closed once the fetch of the job's result
	// directories is over; nil before it starts (Prefetch).
	prefetched <-chan struct{}
	// reached: this node has connected to the result holders
	// (reachHolders).
	reached bool
	// handoff is where the output's handoff to a second holder stands.
	handoff handoffState
}

// New returns a Keeper whose background work ends with ctx or Close.
func New(ctx context.Context, p Params, cfg Config) (*Keeper, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if p.Store == nil || p.Writer == nil {
		return nil, fmt.Errorf("%w: a store and a writer are required", ErrInvalidConfig)
	}
	if cfg.MaxInlineVerdict == 0 {
		cfg.MaxInlineVerdict = DefaultMaxInlineVerdict
	}
	log := p.Logger
	if log == nil {
		log = slog.Default()
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	kctx, cancel := context.WithCancel(ctx)
	return &Keeper{cfg: cfg, p: p, self: p.Store.Self(), log: log, ctx: kctx, cancel: cancel, jobs: map[jobs.ID]*jobCustody{}}, nil
}

// Close stops the prefetches under way and waits for them.
func (k *Keeper) Close() {
	k.once.Do(func() {
		k.cancel()
		k.wg.Wait()
	})
}

// job returns job id's state. k.mu is held.
func (k *Keeper) job(id jobs.ID) *jobCustody {
	j, ok := k.jobs[id]
	if !ok {
		j = &jobCustody{}
		k.jobs[id] = j
	}
	return j
}
