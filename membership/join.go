package membership

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
)

// Escrow is the chain a Joiner reads jobs on and joins them on.
type Escrow interface {
	Job(ctx context.Context, key common.Hash) (escrow.Job, error)
	Join(ctx context.Context, key common.Hash) (*types.Receipt, error)
}

var _ Escrow = (*escrow.Client)(nil)

// JoinConfig tunes a Joiner.
type JoinConfig struct {
	// Wallet is the processor's wallet, the member it makes. Required.
	Wallet common.Address
	// Backoff is the first wait before an unfunded job's escrow is read
	// again; it doubles up to 32 times this. Default 2s.
	Backoff time.Duration
	// SkipJoin admits the processor to funded jobs without joining their
	// escrow: a test seam that plays a processor outside a job's members.
	// False in production.
	SkipJoin bool
}

// Joiner admits a processor to the jobs whose escrow holds them funded,
// making it a member of each first: the escrow pays, slashes and counts
// the signatures of a job's members only. It is safe for concurrent use.
type Joiner struct {
	chain    Escrow
	view     *View
	cfg      JoinConfig
	log      *slog.Logger
	unfunded prometheus.Counter

	mu   sync.Mutex
	jobs map[jobs.ID]*funding
}

// funding is what a Joiner knows of one job's escrow.
type funding struct {
	funded bool
	next   time.Time     // when an unfunded job's escrow is read again
	wait   time.Duration // the current backoff
	// refused is why the escrow refused the join for good (joins closed,
	// the job full): the processor does not work on the job.
	refused string
	// told are the join refusals already logged and counted.
	told map[string]bool
}

// NewJoiner returns a Joiner on chain whose answers about members come
// from view; its metrics are registered with reg when it is not nil.
func NewJoiner(chain Escrow, view *View, cfg JoinConfig, reg prometheus.Registerer, log *slog.Logger) *Joiner {
	if cfg.Backoff <= 0 {
		cfg.Backoff = 2 * time.Second
	}
	j := &Joiner{
		chain: chain, view: view, cfg: cfg, log: log, jobs: map[jobs.ID]*funding{},
		unfunded: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "unfunded_skips_total",
			Help: "Times a job was skipped because its escrow was not funded.",
		}),
	}
	if reg != nil {
		reg.MustRegister(j.unfunded)
	}
	return j
}

// Funded reports whether the processor may work on job id (info): the
// escrow holds it funded for its price with a deadline ahead, and the
// processor is a member (it joins here). A yes is kept; a no is asked
// again after a backoff that doubles up to 32 × Backoff, except a join
// the escrow refuses for good (joins closed, the job full), which keeps
// the processor off the job.
func (j *Joiner) Funded(ctx context.Context, id jobs.ID, info *jobs.JobInfo, now time.Time) bool {
	j.mu.Lock()
	f := j.jobs[id]
	if f == nil {
		f = &funding{}
		j.jobs[id] = f
	}
	if f.funded || f.refused != "" || now.Before(f.next) {
		ok := f.funded
		j.mu.Unlock()
		return ok
	}
	j.mu.Unlock()
	key := EscrowKey(info)
	e, err := j.chain.Job(ctx, key)
	ok := err == nil && e.State == escrow.JobFunded && e.Amount.Cmp(info.PriceWei) >= 0 && e.Deadline.After(now)
	if ok && !j.cfg.SkipJoin {
		err = j.join(ctx, key)
		ok = err == nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if ok {
		f.funded = true
		j.log.Info("job escrow funded", "job", id, "amount", e.Amount, "members", e.Members)
		return true
	}
	f.wait = min(max(2*f.wait, j.cfg.Backoff), 32*j.cfg.Backoff)
	f.next = now.Add(f.wait)
	switch {
	case errors.Is(err, escrow.ErrReverted):
		j.refuseLocked(id, f, err)
	case err != nil:
		j.unfunded.Inc()
		j.log.Warn("skipping job: cannot read or join its escrow", "job", id, "recheck", f.wait, "err", err)
	default:
		j.unfunded.Inc()
		j.log.Info("skipping job: escrow not funded", "job", id, "state", e.State, "amount", e.Amount,
			"price", info.PriceWei, "deadline", e.Deadline, "recheck", f.wait)
	}
	return false
}

// refuseLocked keeps job id from the processor after the escrow refused
// its join with err: for good when asking again cannot help, else until
// the funding backoff. Each reason is logged and counted once per job.
func (j *Joiner) refuseLocked(id jobs.ID, f *funding, err error) {
	reason, permanent := JoinRefusal(err)
	if permanent {
		f.refused = reason
	}
	if f.told[reason] {
		return
	}
	if f.told == nil {
		f.told = map[string]bool{}
	}
	f.told[reason] = true
	j.view.CountRefusal(reason)
	j.log.Warn("not working on the job: its escrow refused this processor's join", "job", id,
		"reason", reason, "final", permanent, "err", err)
}

// join makes the processor's wallet a member of job key, unless it is
// one.
func (j *Joiner) join(ctx context.Context, key common.Hash) error {
	member, err := j.view.IsMember(ctx, key, j.cfg.Wallet)
	if err != nil || member {
		return err
	}
	if _, err := j.chain.Join(ctx, key); err != nil && !errors.Is(err, escrow.ErrAlreadyMember) {
		return fmt.Errorf("joining the job's escrow: %w", err)
	}
	j.view.Joined(key, j.cfg.Wallet)
	return nil
}
