// Package dapp is the submitting side of jobmesh: it publishes a job (code
// and data served from the node's own block layer), keeps announcing it
// until it is finished, and waits for its verdict. With a chain it locks
// the job's price in the escrow contract before publishing the job (so
// processors can see it is funded) and waits for the on-chain release.
package dapp

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/ipfs"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/processor"
)

var (
	// ErrInvalidJob is wrapped when a job spec does not make a valid job.
	ErrInvalidJob = errors.New("dapp: invalid job")
	// ErrNoChain: an escrow operation on a client without a chain.
	ErrNoChain = errors.New("dapp: no chain")
)

// Spec is what a DApp asks the mesh to compute.
type Spec struct {
	Code []byte // the WebAssembly module
	Data []byte // the input data
	// Slicing: BlockSize is required; zero counts take the defaults.
	Slicing      jobs.Slicing
	Price        *big.Int // escrow in wei
	Creator      string   // the creator's EVM address; default with a chain: the funding wallet
	Deadline     time.Time
	Output       jobs.Output
	Requirements jobs.Requirements
	// FundLater publishes the job without creating its escrow; Fund does
	// that later. Processors with a chain skip the job until then. Default
	// false: Submit funds it first.
	FundLater bool
}

// Params are the node parts a Client uses; it closes none of them.
type Params struct {
	Host   *p2p.Host
	Blocks *ipfs.Node
	Store  *crdt.Store
	Logger *slog.Logger
	// Announce is how often unfinished jobs are announced again. Default 5s.
	Announce time.Duration
	// Chain, when set, is the escrow jobs are paid through: Submit creates
	// each job on it and Wait returns its release. Nil: verdicts only.
	Chain *escrow.Client
}

// Client submits jobs and waits for them.
type Client struct {
	p     Params
	log   *slog.Logger
	topic *p2p.Topic[jobs.ChannelMsg]

	mu   sync.Mutex
	open map[jobs.ID]*jobs.JobInfo
	mine map[jobs.ID]bool // every job this client submitted

	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// New joins the Jobs channel. Close leaves it.
func New(p Params) (*Client, error) {
	if p.Announce <= 0 {
		p.Announce = 5 * time.Second
	}
	log := p.Logger
	if log == nil {
		log = slog.Default()
	}
	topic, err := processor.JoinJobsTopic(p.Host)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{p: p, log: log.With("subsystem", "dapp"), topic: topic, open: map[jobs.ID]*jobs.JobInfo{}, mine: map[jobs.ID]bool{}, cancel: cancel}
	c.wg.Add(2)
	go c.answer(ctx)
	go c.reannounce(ctx)
	return c, nil
}

// Close stops announcing and leaves the channel.
func (c *Client) Close() error {
	c.once.Do(func() {
		c.cancel()
		c.wg.Wait()
		c.topic.Close()
	})
	return nil
}

// Submit adds the code and data to the node's block layer, writes the
// JobInfo to the store and announces it.
func (c *Client) Submit(ctx context.Context, s Spec) (*jobs.JobInfo, error) {
	if s.Creator == "" && c.p.Chain != nil {
		// The wallet that funds the escrow is the creator.
		s.Creator = strings.ToLower(c.p.Chain.From().Hex())
	}
	creator, err := jobs.ParseAddress(s.Creator)
	if err != nil {
		return nil, fmt.Errorf("%w: creator: %w", ErrInvalidJob, err)
	}
	if len(s.Code) == 0 || len(s.Data) == 0 {
		return nil, fmt.Errorf("%w: code and data must not be empty", ErrInvalidJob)
	}
	codeURI, err := c.add(ctx, s.Code)
	if err != nil {
		return nil, err
	}
	dataURI, err := c.add(ctx, s.Data)
	if err != nil {
		return nil, err
	}
	var seed jobs.Seed
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, err
	}
	info := &jobs.JobInfo{
		Code:         jobs.Source{URI: codeURI, SHA256: sha256.Sum256(s.Code)},
		Data:         jobs.Data{Source: jobs.Source{URI: dataURI, SHA256: sha256.Sum256(s.Data)}, Size: uint64(len(s.Data))},
		Slicing:      s.Slicing,
		Seed:         seed,
		PriceWei:     s.Price,
		Requirements: s.Requirements,
		Creator:      creator,
		Deadline:     s.Deadline.Unix(),
		Output:       s.Output,
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
	if err := c.p.Store.Put(ctx, processor.JobKey(id), processor.JobType, info.Encode()); err != nil {
		return nil, fmt.Errorf("dapp: storing the job: %w", err)
	}
	c.mu.Lock()
	c.open[id] = info
	c.mine[id] = true
	c.mu.Unlock()
	if err := c.topic.Publish(ctx, jobs.ChannelMsg{Kind: jobs.KindJob, Job: info.Encode()}); err != nil {
		c.log.Warn("announcing job (it is re-announced)", "job", id, "err", err)
	}
	c.log.Info("job submitted", "job", id, "code", codeURI, "data", dataURI)
	return info, nil
}

// Submitted reports whether this client submitted job id.
func (c *Client) Submitted(id jobs.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mine[id]
}

// Fund creates the job's escrow: the price locked under the job's ID, with
// the commitment to its seed and its deadline.
func (c *Client) Fund(ctx context.Context, info *jobs.JobInfo) error {
	if c.p.Chain == nil {
		return ErrNoChain
	}
	id := info.ID()
	rcpt, err := c.p.Chain.CreateJob(ctx, common.Hash(id), escrow.SeedCommitment(common.Hash(info.Seed)),
		time.Unix(info.Deadline, 0), info.PriceWei)
	if err != nil {
		return fmt.Errorf("dapp: funding job %s: %w", id, err)
	}
	c.log.Info("job escrow funded", "job", id, "price", info.PriceWei, "tx", rcpt.TxHash)
	return nil
}

func (c *Client) add(ctx context.Context, b []byte) (string, error) {
	k, err := c.p.Blocks.AddFile(ctx, bytes.NewReader(b))
	if err != nil {
		return "", fmt.Errorf("dapp: adding content: %w", err)
	}
	if err := c.p.Blocks.Provide(ctx, k); err != nil {
		c.log.Warn("providing content (peers that ask still get it)", "cid", k, "err", err)
	}
	return "ipfs://" + k.String(), nil
}

func (c *Client) announceOpen(ctx context.Context) {
	c.mu.Lock()
	var open []*jobs.JobInfo
	for _, info := range c.open {
		open = append(open, info)
	}
	c.mu.Unlock()
	for _, info := range open {
		_ = c.topic.Publish(ctx, jobs.ChannelMsg{Kind: jobs.KindJob, Job: info.Encode()})
	}
}

func (c *Client) answer(ctx context.Context) {
	defer c.wg.Done()
	for {
		m, err := c.topic.Next(ctx)
		if err != nil {
			return
		}
		if m.Value.Kind == jobs.KindQuery && !m.Local {
			c.announceOpen(ctx)
		}
	}
}

func (c *Client) reannounce(ctx context.Context) {
	defer c.wg.Done()
	t := time.NewTicker(c.p.Announce)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.checkAborted(ctx)
			c.announceOpen(ctx)
		}
	}
}

// Result is a finished job.
type Result struct {
	Verdict  microjob.Verdict
	Culprits []string
	Output   cid.Cid
	// Release is the escrow's payout (payees, amounts, refund, the
	// transaction); nil without a chain.
	Release *escrow.Release
}

// Status reads a job's verdict; ok is false while there is none.
func Status(ctx context.Context, store crdt.Reader, id jobs.ID) (Result, bool, error) {
	rec, err := store.Get(ctx, processor.VerdictKey(id))
	if errors.Is(err, crdt.ErrNotFound) {
		return Result{}, false, nil
	}
	if err != nil {
		return Result{}, false, err
	}
	vr, v, err := processor.DecodeVerdictRecord(rec.Payload)
	if err != nil {
		return Result{}, false, err
	}
	out, err := cid.Decode(vr.Output)
	if err != nil {
		return Result{}, false, fmt.Errorf("dapp: verdict output: %w", err)
	}
	return Result{Verdict: v, Culprits: vr.Culprits, Output: out}, true, nil
}

// Wait waits for the job's verdict (WaitVerdict) and, with a chain, for
// its escrow to be released, which it returns in Result.Release.
func (c *Client) Wait(ctx context.Context, id jobs.ID, every time.Duration) (Result, error) {
	r, err := c.WaitVerdict(ctx, id, every)
	if err != nil || c.p.Chain == nil {
		return r, err
	}
	rel, err := c.p.Chain.WaitReleased(ctx, common.Hash(id))
	if err != nil {
		return r, fmt.Errorf("dapp: waiting for the escrow of job %s: %w", id, err)
	}
	r.Release = rel
	c.log.Info("job settled", "job", id, "tx", rel.TxHash, "payees", len(rel.Payees), "refund", rel.Refund)
	return r, nil
}

// WaitVerdict polls the store until the job has a verdict, then stops
// announcing it.
func (c *Client) WaitVerdict(ctx context.Context, id jobs.ID, every time.Duration) (Result, error) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		r, ok, err := Status(ctx, c.p.Store, id)
		if err != nil {
			return r, err
		}
		if ok {
			c.mu.Lock()
			delete(c.open, id)
			c.mu.Unlock()
			return r, nil
		}
		if _, err := processor.ReadAborted(ctx, c.p.Store, id); err == nil {
			c.checkAborted(ctx)
			return Result{}, fmt.Errorf("%w: %s", ErrAborted, id)
		}
		select {
		case <-ctx.Done():
			return Result{}, ctx.Err()
		case <-t.C:
		}
	}
}
