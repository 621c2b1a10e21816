package settlement

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/membership"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// Chain is the escrow a Settler reads and settles on.
type Chain interface {
	Job(ctx context.Context, key common.Hash) (escrow.Job, error)
	// Now is the chain's clock: its latest block's time.
	Now(ctx context.Context) (time.Time, error)
	Domain() escrow.Domain
	Quorum(ctx context.Context) (num, den *big.Int, err error)
	Settle(ctx context.Context, s escrow.Settlement, sigs []escrow.SignedBy) (*types.Receipt, error)
}

// Verdicts is the processor's judgement of its finished jobs.
type Verdicts interface {
	// Records returns job id's records as the processor judges them,
	// with its settlement proposal and signatures.
	Records(ctx context.Context, id jobs.ID) (*finish.Records, error)
	// Audit returns the verdict record the processor stands behind for
	// the finished job id, recomputed from recs, and its verdict; an
	// error wrapping ErrNotSigning when it stands behind none.
	Audit(ctx context.Context, id jobs.ID, recs *finish.Records) (records.VerdictRecord, microjob.Verdict, error)
}

// Members says who joined a job's escrow: the contract pays, slashes and
// counts the signatures of members only.
type Members interface {
	IsMember(ctx context.Context, key common.Hash, account common.Address) (bool, error)
	// Wallets returns those of list that are members of job key, each
	// left out counted once as record.
	Wallets(ctx context.Context, id jobs.ID, key common.Hash, list []string, record string) ([]string, error)
	// Count counts and logs, once per key, a record left out.
	Count(record, key, msg string, args ...any)
}

// Wallets are the verified wallet bindings: money follows them, never
// the wallets records claim.
type Wallets interface {
	// CheckPayees refuses (membership.ErrUnboundPayee) a verdict that
	// pays a wallet not bound to its result's processor.
	CheckPayees(id jobs.ID, rec records.VerdictRecord, v microjob.Verdict) error
	// CulpritWallets are the bound wallets of culprits.
	CulpritWallets(culprits []string) []string
}

// Store is where a Settler writes its proposals, signatures and settle
// transactions.
type Store interface {
	Put(ctx context.Context, key, recordType string, payload []byte) error
	// PutBatch writes entries as one update (crdt.Store.PutBatch).
	PutBatch(ctx context.Context, entries []crdt.Entry) error
}

var (
	_ Chain   = (*escrow.Client)(nil)
	_ Members = (*membership.View)(nil)
	_ Wallets = (*membership.Wallets)(nil)
	_ Store   = (*crdt.Store)(nil)
)

// Errors of a settlement step that are no failure: the job waits, and the
// next step tries again.
var (
	// ErrNoQuorum: too few members have signed the settlement yet.
	ErrNoQuorum = errors.New("settlement: signatures below quorum")
	// ErrNotOpen: the job's quiet period after its last join is not over.
	ErrNotOpen = errors.New("settlement: the job's quiet period is not over")
	// ErrNonMemberPayee: the settlement would pay a wallet that is not a
	// member of the job (the contract would refuse it).
	ErrNonMemberPayee = errors.New("settlement: pays a wallet that is not a member of the job")
	// ErrNotSigning is wrapped by Verdicts.Audit when the processor
	// stands behind no verdict of the job, so signs nothing.
	ErrNotSigning = errors.New("settlement: not signing")
)

// ErrInvalidConfig is wrapped by the errors of a Config or Params that
// cannot work.
var ErrInvalidConfig = errors.New("settlement: invalid config")

// Config tunes a Settler.
type Config struct {
	// Dispatch are the mesh's dispatching parameters, whose fee weights
	// split the price (DeriveSettlement); every member must use the same.
	// Default dispatch.DefaultConfig().
	Dispatch dispatch.Config
	// Poll is how often Submit reads the escrow again while it waits for
	// the quiet period; a read of a job is reused for two Polls. Default
	// 2s.
	Poll time.Duration
	// Fallback is how long a member that signed waits, once it sees a
	// quorum of signatures, before it submits the settlement though it is
	// no finalizer (the finalizers may be gone). Default 1m.
	Fallback time.Duration
	// BeforeSettle, when set, is called once a quorum has signed, before
	// the settler submits (fallback: it steps in after Fallback rather
	// than as a finalizer); false skips submitting this time. A test seam
	// to make submitters race or stay away. Nil in production.
	BeforeSettle func(job jobs.ID, fallback bool) bool
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{Dispatch: dispatch.DefaultConfig(), Poll: 2 * time.Second, Fallback: time.Minute}
}

// Validate checks the config.
func (c Config) Validate() error {
	if c.Poll <= 0 || c.Fallback <= 0 {
		return fmt.Errorf("%w: poll and fallback must be positive", ErrInvalidConfig)
	}
	if err := c.Dispatch.Validate(); err != nil {
		return fmt.Errorf("%w: dispatch: %w", ErrInvalidConfig, err)
	}
	return nil
}

// Params are what a Settler works with; it closes none of them. All are
// required but Logger, Registerer and Now.
type Params struct {
	Chain Chain
	// Key signs this processor's settlements; its address is the
	// processor's wallet.
	Key *ecdsa.PrivateKey
	// Self is this node's peer ID: the key of its signature records and
	// the submitter of its settle transactions.
	Self     string
	Store    Store
	Verdicts Verdicts
	Members  Members
	Wallets  Wallets
	Logger   *slog.Logger
	// Registerer, when set, registers the settler's metrics.
	Registerer prometheus.Registerer
	// Now is the clock of the waits (the quorum fallback, the reuse of
	// reads). Default time.Now.
	Now func() time.Time
}

// Job is a finished job as a Settler sees it.
type Job struct {
	ID   jobs.ID
	Info *jobs.JobInfo
	// Finalizer: this processor wrote the job's verdict, so it proposes
	// the settlement and submits it.
	Finalizer bool
	// FinishedAt is when the job was finished: a job finished again
	// (its verdict was taken back) tells of a differing proposal again.
	FinishedAt time.Time
	// Failed, when set, is the job's failure this processor stands behind
	// (finish.JobFailed): the job is settled by its FailureSettlement,
	// which every processor that stands behind it proposes (its content is
	// a function of the records), and Finalizer submits.
	Failed *finish.FailedJob
}

// Settler drives the on-chain settlement of one processor's finished
// jobs, a step at a time. It is safe for concurrent use.
type Settler struct {
	cfg                  Config
	p                    Params
	wallet               common.Address
	log                  *slog.Logger
	m                    metrics
	quorumNum, quorumDen *big.Int

	mu    sync.Mutex
	state map[jobs.ID]*jobState
}

// jobState is what a Settler knows of a job's settlement between steps.
type jobState struct {
	// job is the job as last read from the chain, at jobAt (chainJob).
	job   escrow.Job
	jobAt time.Time
	// waiting: the quiet period was found not over, and said so.
	waiting bool
	// quorumAt is when this processor, as a member that signed, first
	// saw a quorum of signatures.
	quorumAt time.Time
	// mismatch: a proposal differing from this processor's own was told,
	// for the job as finished at finishedAt.
	mismatch   bool
	finishedAt time.Time
}

type metrics struct {
	settlements *prometheus.CounterVec
	signatures  prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) metrics {
	m := metrics{
		settlements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "settlements_total",
			Help: "Settle transactions this processor sent, by outcome (submitted, failed, lost: another landed first, early: a join restarted the quiet period).",
		}, []string{"outcome"}),
		signatures: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "settlement_signatures_total",
			Help: "Settlement signatures this processor wrote.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.settlements, m.signatures)
	}
	return m
}

// New returns a Settler; it reads the escrow's signing quorum.
func New(ctx context.Context, p Params, cfg Config) (*Settler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if p.Chain == nil || p.Key == nil || p.Store == nil || p.Verdicts == nil || p.Members == nil || p.Wallets == nil || p.Self == "" {
		return nil, fmt.Errorf("%w: chain, key, self, store, verdicts, members and wallets are required", ErrInvalidConfig)
	}
	num, den, err := p.Chain.Quorum(ctx)
	if err != nil {
		return nil, fmt.Errorf("settlement: reading the escrow's quorum: %w", err)
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	log := p.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Settler{
		cfg: cfg, p: p, wallet: ethcrypto.PubkeyToAddress(p.Key.PublicKey), log: log,
		m: newMetrics(p.Registerer), quorumNum: num, quorumDen: den, state: map[jobs.ID]*jobState{},
	}, nil
}

// jobStateLocked returns j's state, made on first use; s.mu is held.
func (s *Settler) jobStateLocked(j Job) *jobState {
	st := s.state[j.ID]
	if st == nil {
		st = &jobState{finishedAt: j.FinishedAt}
		s.state[j.ID] = st
	}
	if !st.finishedAt.Equal(j.FinishedAt) {
		st.finishedAt, st.mismatch = j.FinishedAt, false
	}
	return st
}

// forget drops what the settler holds of job id, once it is done.
func (s *Settler) forget(id jobs.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.state, id)
}

// Tick takes one step of each job's settlement and returns the jobs that
// are done (Step). It logs the failures: waits are none; a refused
// signature is logged once, by the audit; an unbound or non-member payee
// once, by its view.
func (s *Settler) Tick(ctx context.Context, todo []Job) (done []jobs.ID) {
	for _, j := range todo {
		ok, err := s.Step(ctx, j)
		if ok {
			done = append(done, j.ID)
		}
		if err != nil && ctx.Err() == nil && !errors.Is(err, ErrNoQuorum) && !errors.Is(err, ErrNotOpen) &&
			!errors.Is(err, ErrNotSigning) && !errors.Is(err, membership.ErrUnboundPayee) && !errors.Is(err, ErrNonMemberPayee) {
			s.log.Warn("settling on chain", "job", j.ID, "err", err)
		}
	}
	return done
}

// Step takes one step of a finished job's settlement: the finalizer
// proposes, members that agree sign, and once a quorum of the members has
// signed and the quiet period after the last join is over, the finalizer
// submits. done reports that the job needs no more steps: it is settled
// (by anyone), closed on chain, or cannot be settled.
func (s *Settler) Step(ctx context.Context, j Job) (done bool, err error) {
	done, err = s.step(ctx, j)
	if done {
		s.forget(j.ID)
	}
	return done, err
}

func (s *Settler) step(ctx context.Context, j Job) (done bool, err error) {
	cv, err := s.view(ctx, j)
	if errors.Is(err, ErrNotSettleable) {
		s.log.Warn("verdict cannot be settled on chain", "job", j.ID, "err", err)
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if cv.settled {
		return true, nil
	}
	if cv.proposal == nil || !Same(*cv.proposal, cv.own) {
		return false, s.propose(ctx, j, cv)
	}
	if !cv.mine && cv.member {
		return false, s.sign(ctx, j.ID, cv.own) // the next step sees the signature
	}
	if !j.Finalizer && !cv.mine {
		return false, nil // neither submits nor steps in
	}
	cj, err := s.chainJob(ctx, j, false)
	if err != nil {
		return false, err
	}
	if cj.State != escrow.JobFunded {
		return true, nil
	}
	hasQuorum := Quorum(len(cv.sigs), cj, s.quorumNum, s.quorumDen)
	// A member steps in when a signed settlement stays unsubmitted for
	// Fallback (its finalizers may be gone).
	fallback := hasQuorum && cv.mine && s.quorumSince(j) >= s.cfg.Fallback
	if !j.Finalizer && !fallback {
		return false, nil
	}
	if !hasQuorum {
		return false, ErrNoQuorum
	}
	if open, err := s.settleOpen(ctx, j, cj); err != nil || !open {
		return false, errors.Join(err, ErrNotOpen)
	}
	if s.cfg.BeforeSettle != nil && !s.cfg.BeforeSettle(j.ID, fallback) {
		return false, nil
	}
	if fallback && !j.Finalizer {
		s.log.Info("signed settlement left unsubmitted; submitting it", "job", j.ID)
	}
	_, done, err = s.submit(ctx, j)
	return done, err
}

// quorumSince is how long ago this processor, as a member that signed,
// first saw a quorum of signatures of j's settlement: now, the first time.
func (s *Settler) quorumSince(j Job) time.Duration {
	now := s.p.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.jobStateLocked(j)
	if st.quorumAt.IsZero() {
		st.quorumAt = now
	}
	return now.Sub(st.quorumAt)
}

// propose writes this finalizer's settlement when the proposal is missing
// or differs from it; another processor only says, once, that it does
// not sign (yet).
func (s *Settler) propose(ctx context.Context, j Job, cv view) error {
	if cv.proposal != nil {
		// Racing finalizers' verdicts (and so proposals) can differ
		// until the store converges on one verdict record; every
		// replica then derives the same settlement, and a finalizer
		// re-proposes it.
		s.mu.Lock()
		st := s.jobStateLocked(j)
		told := st.mismatch
		st.mismatch = true
		s.mu.Unlock()
		if !told {
			s.log.Info("not signing: the proposed settlement differs from this processor's own (yet)", "job", j.ID)
		}
	}
	if !j.Finalizer && j.Failed == nil {
		return nil
	}
	if err := s.putJSON(ctx, records.SettlementKey(j.ID), records.SettlementType, records.NewSettlementRecord(cv.own)); err != nil {
		return fmt.Errorf("writing settlement: %w", err)
	}
	s.log.Info("settlement proposed", "job", j.ID, "payees", len(cv.own.Payees), "culprits", len(cv.own.Culprits))
	return nil
}

// sign writes this processor's signature of st.
func (s *Settler) sign(ctx context.Context, id jobs.ID, st escrow.Settlement) error {
	domain := s.p.Chain.Domain()
	sig, err := escrow.SignSettlement(s.p.Key, domain, st)
	if err != nil {
		return err
	}
	b, err := escrow.SignedSettlement{Domain: domain, Settlement: st, Signer: s.wallet, Signature: sig}.MarshalBinary()
	if err != nil {
		return err
	}
	if err := s.p.Store.Put(ctx, records.SignatureKey(id, s.p.Self), records.SignatureType, b); err != nil {
		return fmt.Errorf("writing settlement signature: %w", err)
	}
	s.m.signatures.Inc()
	s.log.Info("settlement signed", "job", id, "wallet", strings.ToLower(s.wallet.Hex()))
	return nil
}

// putJSON writes v, encoded as JSON, as a record of type typ under key.
func (s *Settler) putJSON(ctx context.Context, key, typ string, v any) error {
	e, err := crdt.JSONEntry(key, typ, v)
	if err != nil {
		return err
	}
	return s.p.Store.Put(ctx, e.Key, e.Type, e.Payload)
}
