package dapp

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/fetch"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/ipfs"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/membership"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/records"
)

var (
	// ErrInvalidJob is wrapped when a job spec does not make a valid job.
	ErrInvalidJob = errors.New("dapp: invalid job")
	// ErrNoChain: an escrow operation on a client without a chain.
	ErrNoChain = errors.New("dapp: no chain")
	// ErrInsufficientFunds: the wallet cannot pay the job's price plus
	// gas. Nothing was published.
	ErrInsufficientFunds = errors.New("dapp: insufficient funds for the escrow")
)

// Channel is where jobs are announced: the Jobs channel.
type Channel interface {
	Publish(ctx context.Context, m jobs.ChannelMsg) error
}

var _ Channel = (*p2p.Topic[jobs.ChannelMsg])(nil)

// Spec is what a DApp asks the mesh to compute.
type Spec struct {
	Code []byte // the WebAssembly module
	Data []byte // the input data
	// Slicing: BlockSize is required; zero counts take the defaults.
	Slicing      jobs.Slicing
	Price        *big.Int // escrow in wei
	Creator      string   // the creator's EVM address; default: the node's wallet
	Deadline     time.Time
	Output       jobs.Output
	Requirements jobs.Requirements
	TaskSize     uint64 // optional task size estimate; 0 = unknown
	// Limits are optional per-block limits below the processors' own.
	Limits jobs.Limits
	// FundLater publishes the job without creating its escrow; Fund does
	// that later. Processors with a chain skip the job until then. Default
	// false: Submit funds it first.
	FundLater bool
}

// SourceSpec is a Spec whose code and data are already published
// somewhere the processors can fetch them: URIs pinned by their SHA-256,
// and the data's size.
type SourceSpec struct {
	Code jobs.Source
	Data jobs.Data
	Spec // Code and Data of the embedded Spec are ignored
}

// Joiner joins a job's store (jobstore.Router).
type Joiner interface {
	Join(ctx context.Context, id jobs.ID) error
}

// Params are the node parts a Client uses; it closes none of them.
type Params struct {
	Host   *p2p.Host
	Blocks *ipfs.Node
	Store  crdt.Replicated
	Logger *slog.Logger
	// Jobs, when set, is where the creator's node takes part in its jobs'
	// own records (their verdicts, holders, reveals): Submit joins the
	// job's store before it publishes the job, and a restart joins the
	// stores of the jobs still open. Nil: one store holds every record.
	Jobs Joiner
	// Channel, when set, is the Jobs channel to announce on, already
	// joined by another part of the node (a processor's worker, which also
	// answers the channel's queries). Default nil: the Client joins it and
	// answers queries itself.
	Channel Channel
	// Local, when set, is the node's own, non-replicated datastore where
	// the Client remembers the jobs it submitted, so that after a restart
	// it keeps announcing the unfinished ones. Default nil: remembered in
	// memory only.
	Local ds.Datastore
	// Fetch, when set, reads content named by URI for SubmitSource's
	// hashing and sizing (Describe). Default nil: only URIs with their
	// hash and size are accepted.
	Fetch *fetch.Registry
	// MaxCodeSize and MaxDataSize bound what Describe reads: the limits
	// processors apply. Default 64 MiB and 1 GiB.
	MaxCodeSize, MaxDataSize int64
	// Announce is how often unfinished jobs are announced again. Default 5s.
	Announce time.Duration
	// Registerer receives the client's metrics. Default nil: none.
	Registerer prometheus.Registerer
	// Chain, when set, is the escrow jobs are paid through: Submit creates
	// each job on it and Wait returns its release. Nil: verdicts only.
	Chain *escrow.Client
	// Terms are the terms Fund creates jobs with on Chain: the quiet
	// period after the last join before a job may be settled, and the
	// fewest member signatures a settlement needs. The zero value means
	// escrow.DefaultTerms() (1 minute, 2 signers); other values must pass
	// escrow.Terms.Validate.
	Terms escrow.Terms
	// WalletKey is the node's wallet: the default creator of its jobs, and
	// the key that signs their cancel records. Default nil: every Spec
	// names its creator, and jobs cannot be cancelled without a chain.
	WalletKey *ecdsa.PrivateKey
	// FailReports is how many processors must report the same failure of
	// a job for Wait to return it without a chain (dispatch.Config's
	// FailReports). Default 2.
	FailReports int
}

// Client submits jobs and waits for them.
type Client struct {
	p     Params
	log   *slog.Logger
	m     *metrics
	topic *p2p.Topic[jobs.ChannelMsg] // joined by the Client; nil with Params.Channel
	ch    Channel

	mu   sync.Mutex
	open map[jobs.ID]*jobs.JobInfo
	mine map[jobs.ID]*jobs.JobInfo // every job this client submitted
	// reprovide are the ipfs:// inputs of restored open jobs, provided
	// again once the Client runs.
	reprovide []cid.Cid
	// toHold are finished jobs whose output this node has yet to pin and
	// say it holds (hold.go); holdNow wakes holdLoop.
	toHold  map[jobs.ID]bool
	holdNow chan struct{}
	// following stops, by job, the following of an open job's holder
	// records (hold.go); runCtx is the context they run under.
	following map[jobs.ID]context.CancelFunc
	runCtx    context.Context
	// rules are how the client judges a job's records with a chain: as
	// its processors do (membership.ReaderRules); zero without one.
	rules finish.Rules
	// secrets are the check seeds of this client's open jobs; revealed
	// those it has published (reveal.go).
	secrets  map[jobs.ID]jobs.Seed
	revealed map[jobs.ID]bool

	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// New joins the Jobs channel (unless Params.Channel is set) and restores
// the jobs Params.Local remembers. Close leaves the channel.
func New(p Params) (*Client, error) {
	if p.Announce <= 0 {
		p.Announce = 5 * time.Second
	}
	if p.MaxCodeSize <= 0 {
		p.MaxCodeSize = 64 << 20
	}
	if p.MaxDataSize <= 0 {
		p.MaxDataSize = 1 << 30
	}
	if p.Terms == (escrow.Terms{}) {
		p.Terms = escrow.DefaultTerms()
	}
	if err := p.Terms.Validate(); err != nil {
		return nil, fmt.Errorf("dapp: %w", err)
	}
	log := p.Logger
	if log == nil {
		log = slog.Default()
	}
	c := &Client{p: p, log: log.With("subsystem", "dapp"), ch: p.Channel,
		open: map[jobs.ID]*jobs.JobInfo{}, mine: map[jobs.ID]*jobs.JobInfo{}, secrets: map[jobs.ID]jobs.Seed{}, revealed: map[jobs.ID]bool{},
		toHold: map[jobs.ID]bool{}, holdNow: make(chan struct{}, 1), following: map[jobs.ID]context.CancelFunc{}}
	if p.Chain != nil {
		c.rules = membership.ReaderRules(p.Store, membership.NewMembers(p.Chain, 0), membership.NewStakers(p.Chain))
	}
	m, err := newMetrics(p.Registerer, func() float64 {
		c.mu.Lock()
		defer c.mu.Unlock()
		return float64(len(c.open))
	})
	if err != nil {
		return nil, err
	}
	c.m = m
	if err := c.restore(context.Background()); err != nil {
		return nil, err
	}
	if c.ch == nil {
		topic, err := jobs.JoinJobsTopic(p.Host)
		if err != nil {
			return nil, err
		}
		c.topic, c.ch = topic, topic
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.mu.Lock()
	c.runCtx = ctx
	c.mu.Unlock()
	for _, info := range c.openJobs() {
		c.followHolders(info.ID())
	}
	if c.topic != nil {
		c.wg.Add(1)
		go c.answer(ctx)
	}
	c.wg.Add(3)
	go c.reannounce(ctx)
	go c.holdLoop(ctx)
	go c.revealLoop(ctx)
	return c, nil
}

// Close stops announcing and leaves the channel if it joined it.
func (c *Client) Close() error {
	c.once.Do(func() {
		c.mu.Lock() // no follower starts after this (followHolders)
		c.cancel()
		c.mu.Unlock()
		c.wg.Wait()
		if c.topic != nil {
			c.topic.Close()
		}
	})
	return nil
}

// Submit adds the code and data to the node's block layer, writes the
// JobInfo to the store and announces it.
func (c *Client) Submit(ctx context.Context, s Spec) (*jobs.JobInfo, error) {
	if len(s.Code) == 0 || len(s.Data) == 0 {
		return nil, fmt.Errorf("%w: code and data must not be empty", ErrInvalidJob)
	}
	codeURI, err := c.Add(ctx, bytes.NewReader(s.Code))
	if err != nil {
		return nil, err
	}
	dataURI, err := c.Add(ctx, bytes.NewReader(s.Data))
	if err != nil {
		return nil, err
	}
	return c.SubmitSource(ctx, SourceSpec{
		Code: jobs.Source{URI: "ipfs://" + codeURI.String(), SHA256: sha256.Sum256(s.Code)},
		Data: jobs.Data{Source: jobs.Source{URI: "ipfs://" + dataURI.String(), SHA256: sha256.Sum256(s.Data)}, Size: uint64(len(s.Data))},
		Spec: s,
	})
}

// SubmitSource publishes a job whose code and data are named by URI: it
// validates the job, funds its escrow (with a chain, unless FundLater),
// writes the JobInfo to the store, remembers it and announces it.
func (c *Client) SubmitSource(ctx context.Context, s SourceSpec) (*jobs.JobInfo, error) {
	if s.Creator == "" {
		switch {
		case c.p.Chain != nil:
			// The wallet that funds the escrow is the creator.
			s.Creator = strings.ToLower(c.p.Chain.From().Hex())
		case c.p.WalletKey != nil:
			s.Creator = strings.ToLower(ethcrypto.PubkeyToAddress(c.p.WalletKey.PublicKey).Hex())
		}
	}
	if s.Creator == "" {
		return nil, fmt.Errorf("%w: creator: the node has no wallet key (%s) and the job names no creator", ErrInvalidJob, "wallet.key")
	}
	creator, err := jobs.ParseAddress(s.Creator)
	if err != nil {
		return nil, fmt.Errorf("%w: creator: %w", ErrInvalidJob, err)
	}
	// The check seed stays on this node until every regular MicroJob is
	// committed (reveal.go); the job carries only its commitment.
	var secret jobs.Seed
	if _, err := rand.Read(secret[:]); err != nil {
		return nil, err
	}
	deadline := int64(0)
	if !s.Deadline.IsZero() {
		deadline = s.Deadline.Unix()
	}
	info := &jobs.JobInfo{
		Code:           s.Code,
		Data:           s.Data,
		Slicing:        s.Slicing,
		SeedCommitment: jobs.CommitSeed(secret),
		PriceWei:       s.Price,
		Requirements:   s.Requirements,
		Creator:        creator,
		Deadline:       deadline,
		Output:         s.Output,
		TaskSize:       s.TaskSize,
		Limits:         s.Limits,
	}
	info.ApplyDefaults()
	if err := info.Validate(time.Now()); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidJob, err)
	}
	if _, err := jobs.Slice(info); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidJob, err)
	}
	id := info.ID()
	if c.p.Chain != nil && !s.FundLater {
		if err := c.Fund(ctx, info); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	c.secrets[id] = secret
	c.mu.Unlock()
	if !c.canReveal(info) {
		c.log.Warn("this node cannot sign the job's reveal: its checks will be drawn from the lapse seed", "job", id, "creator", info.Creator)
	}
	// Remembered before it is published: a crash in between leaves a job
	// this node announces again on restart, never one it forgot.
	if err := c.remember(ctx, info, stateOpen); err != nil {
		return nil, err
	}
	if c.p.Jobs != nil {
		if err := c.p.Jobs.Join(ctx, id); err != nil {
			return nil, fmt.Errorf("dapp: joining the job's store: %w", err)
		}
	}
	if err := c.p.Store.Put(ctx, records.JobKey(id), records.JobType, info.Encode()); err != nil {
		return nil, fmt.Errorf("dapp: storing the job: %w", err)
	}
	c.mu.Lock()
	c.open[id] = info
	c.mine[id] = info
	c.mu.Unlock()
	c.pinInputs(ctx, info)
	c.followHolders(id)
	if err := c.ch.Publish(ctx, jobs.ChannelMsg{Kind: jobs.KindJob, Job: info.Encode()}); err != nil {
		c.log.Warn("announcing job (it is re-announced)", "job", id, "err", err)
	}
	c.m.submitted.Inc()
	c.log.Info("job submitted", "job", id, "code", info.Code.URI, "data", info.Data.URI)
	return info, nil
}

// Submitted reports whether this client submitted job id.
func (c *Client) Submitted(id jobs.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mine[id] != nil
}

// Fund creates the job's escrow: the price locked under the job's key (its
// ID bound to the funding wallet, which must be its creator), with the
// commitment to its seed, its deadline and the client's Terms.
func (c *Client) Fund(ctx context.Context, info *jobs.JobInfo) error {
	if c.p.Chain == nil {
		return ErrNoChain
	}
	id := info.ID()
	if common.Address(info.Creator) != c.p.Chain.From() {
		// Processors look the escrow up under the JobInfo's creator.
		return fmt.Errorf("%w: creator %s is not the wallet %s that funds the escrow", ErrInvalidJob,
			common.Address(info.Creator), c.p.Chain.From())
	}
	if d := time.Unix(info.Deadline, 0); time.Until(d) <= c.p.Terms.Quiet {
		// The escrow closes joins a quiet period before the deadline.
		return fmt.Errorf("%w: deadline %s leaves less than the escrow's quiet period %s", ErrInvalidJob,
			d.UTC().Format(time.RFC3339), c.p.Terms.Quiet)
	}
	rcpt, err := c.p.Chain.CreateJob(ctx, common.Hash(id), common.Hash(info.SeedCommitment),
		time.Unix(info.Deadline, 0), c.p.Terms, info.PriceWei)
	if errors.Is(err, escrow.ErrInsufficientFunds) {
		return fmt.Errorf("%w: wallet %s, price %s wei: %w", ErrInsufficientFunds, strings.ToLower(c.p.Chain.From().Hex()), info.PriceWei, err)
	}
	if err != nil {
		return fmt.Errorf("dapp: funding job %s: %w", id, err)
	}
	c.log.Info("job escrow funded", "job", id, "price", info.PriceWei, "tx", rcpt.TxHash,
		"quiet", c.p.Terms.Quiet, "minSigners", c.p.Terms.MinSigners)
	return nil
}

// Add adds content to the node's block layer as UnixFS and provides it.
// It is AddChecked without a check.
func (c *Client) Add(ctx context.Context, r io.Reader) (cid.Cid, error) {
	return c.AddChecked(ctx, r, nil)
}

// AddChecked adds content as an upload: r is staged (spooled to disk)
// until it ends, check (when not nil) sees its size, and only then is it
// imported into the block layer, pinned as an upload for the block
// layer's PinRetention (a job that uses it pins it for as long as the
// job runs), and provided. When reading r fails or check refuses, the
// error is returned (wrapped) and nothing is left on disk.
func (c *Client) AddChecked(ctx context.Context, r io.Reader, check func(size int64) error) (cid.Cid, error) {
	st, err := c.p.Blocks.Stage(r)
	if err != nil {
		return cid.Undef, fmt.Errorf("dapp: adding content: %w", err)
	}
	if check != nil {
		if err := check(st.Size()); err != nil {
			st.Refuse()
			return cid.Undef, fmt.Errorf("dapp: adding content: %w", err)
		}
	}
	k, err := st.Commit(ctx, UploadPinOwner, time.Now().Add(c.p.Blocks.Config().PinRetention))
	if err != nil {
		return cid.Undef, fmt.Errorf("dapp: adding content: %w", err)
	}
	c.provide(ctx, k)
	return k, nil
}

// UploadPinOwner is the block layer's pin owner of uploaded content.
const UploadPinOwner = "upload"

func (c *Client) provide(ctx context.Context, k cid.Cid) {
	if err := c.p.Blocks.Provide(ctx, k); err != nil {
		c.log.Warn("providing content (peers that ask still get it)", "cid", k, "err", err)
	}
}

// openJobs returns the client's open jobs.
func (c *Client) openJobs() []*jobs.JobInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	open := make([]*jobs.JobInfo, 0, len(c.open))
	for _, info := range c.open {
		open = append(open, info)
	}
	return open
}

func (c *Client) announceOpen(ctx context.Context) {
	for _, info := range c.openJobs() {
		_ = c.ch.Publish(ctx, jobs.ChannelMsg{Kind: jobs.KindJob, Job: info.Encode()})
	}
}

// answer answers queries for open jobs on the Jobs channel with the
// client's own, at most once per second (jobs.QueryAnswers).
func (c *Client) answer(ctx context.Context) {
	defer c.wg.Done()
	answers := jobs.QueryAnswers{Window: time.Second}
	for {
		m, err := c.topic.Next(ctx)
		if err != nil {
			return
		}
		if m.Value.Kind == jobs.KindQuery && !m.Local && answers.Due(time.Now()) {
			c.announceOpen(ctx)
		}
	}
}

func (c *Client) reannounce(ctx context.Context) {
	defer c.wg.Done()
	for _, k := range c.reprovide {
		c.provide(ctx, k)
	}
	c.announceOpen(ctx)
	t := time.NewTicker(c.p.Announce)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.closeFinished(ctx)
			c.checkAborted(ctx)
			c.announceOpen(ctx)
		}
	}
}
