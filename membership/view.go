package membership

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// A job's members are the processors that joined its escrow
// (escrow.Client.Join). The contract pays, slashes and counts the
// signatures of members only, and a member cannot leave. So, with a chain:
//
//   - a processor works on a job (rooms, commitments, redos, re-runs) only
//     once it is a member; a join the contract refuses (joins closed, the
//     job full, too little stake) keeps it off the job, logged and counted
//     once (JoinRefusal);
//   - a disclosure whose wallet is not a member of the job is left out of
//     judging, as one whose wallet is not bound is (Wallets.Filter): its
//     MicroJob is redone by members and its author is not paid. A
//     non-member risks no stake on the job, so its results prove nothing,
//     and paying it would make the contract refuse the settlement;
//   - a culprit whose wallet is not a member is not named (the contract
//     would refuse the settlement; there is no stake of the job to burn);
//   - every member that recomputes the verdict signs, and the quorum is
//     counted over the members as the contract counts it (settlement.Quorum).
//
// The answers come from a Members cache over the chain; a View is a
// processor's side of them.

// DisclosureFilter says whether a disclosure of job info counts in
// judging it (membership.KeepMembers returns one).
type DisclosureFilter func(ctx context.Context, info *jobs.JobInfo, d microjob.Disclosure) (bool, error)

// View is a processor's side of membership: the cached answers, and
// what it left out for not being a member, each counted and logged once.
// It is safe for concurrent use. Without a chain, Filter and Wallets
// keep every wallet.
type View struct {
	*Members // nil without a chain: every wallet counts
	log      *slog.Logger
	left     *prometheus.CounterVec
	refused  *prometheus.CounterVec

	mu       sync.Mutex
	counted  map[string]struct{}
	filtered map[jobs.ID]filteredRecords
}

// NewView returns a view over chain (nil: no chain); a no is asked again
// after backoff (NewMembers). Its metrics are registered with reg when it
// is not nil.
func NewView(chain MemberReader, backoff time.Duration, reg prometheus.Registerer, log *slog.Logger) *View {
	v := &View{
		log: log, counted: map[string]struct{}{}, filtered: map[jobs.ID]filteredRecords{},
		left: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "non_members_total",
			Help: "Records naming a wallet that is not a member of the job's escrow, each counted once, by record (disclosure: left out of judging; culprit: not named in the settlement; payee, signature: settlement not signed, signature not counted).",
		}, []string{"record"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "join_refusals_total",
			Help: "Jobs this processor does not work on because the escrow refused its join, once per job and reason (closed, full, stake, other).",
		}, []string{"reason"}),
	}
	if chain != nil {
		v.Members = NewMembers(chain, backoff)
	}
	if reg != nil {
		reg.MustRegister(v.left, v.refused)
	}
	return v
}

// Version changes whenever a membership answer that Filter depends on
// does; 0 without a chain.
func (v *View) Version() uint64 {
	if v == nil || v.Members == nil {
		return 0
	}
	return v.Members.Version()
}

// Filter returns job id's records without the disclosures whose wallet
// is not a member of its escrow (recs itself when there are none, without
// a chain, or when info, the job, is nil). Like recs, the result is
// shared and must not be modified.
func (v *View) Filter(ctx context.Context, id jobs.ID, info *jobs.JobInfo, recs *finish.Records) (*finish.Records, error) {
	if v == nil || v.Members == nil || info == nil {
		return recs, nil
	}
	ver := v.Members.Version()
	v.mu.Lock()
	if c, ok := v.filtered[id]; ok && c.src == recs && c.version == ver {
		v.mu.Unlock()
		return c.out, nil
	}
	v.mu.Unlock()
	key := EscrowKey(info)
	member := map[string]bool{}
	for _, d := range recs.Discl {
		if _, ok := member[d.Wallet]; ok {
			continue
		}
		a, err := microjob.ParseWallet(d.Wallet)
		if err != nil {
			member[d.Wallet] = false
			continue
		}
		ok, err := v.IsMember(ctx, key, a)
		if err != nil {
			return nil, err
		}
		member[d.Wallet] = ok
	}
	out := recs
	if slices.ContainsFunc(recs.Discl, func(d microjob.Disclosure) bool { return !member[d.Wallet] }) {
		o := *recs
		o.Discl, o.DisclSeqs = nil, nil
		for i, d := range recs.Discl {
			if member[d.Wallet] {
				o.Discl = append(o.Discl, d)
				o.DisclSeqs = append(o.DisclSeqs, recs.DisclSeqs[i])
				continue
			}
			v.Count("disclosure", records.DisclosureKey(d)+" "+d.Wallet, "disclosure left out of judging: its wallet is not a member of the job's escrow",
				"job", id, "micro", d.MicroID, "processor", d.Processor, "wallet", d.Wallet)
		}
		out = &o
	}
	v.mu.Lock()
	if len(v.filtered) >= maxFiltered {
		clear(v.filtered)
	}
	v.filtered[id] = filteredRecords{src: recs, version: ver, out: out}
	v.mu.Unlock()
	return out, nil
}

// Wallets returns those of list (0x wallets) that are members of job
// key, in order; each left out is counted once as record.
func (v *View) Wallets(ctx context.Context, id jobs.ID, key common.Hash, list []string, record string) ([]string, error) {
	if v == nil || v.Members == nil {
		return list, nil
	}
	var out []string
	for _, w := range list {
		a, err := microjob.ParseWallet(w)
		if err != nil {
			continue
		}
		ok, err := v.IsMember(ctx, key, a)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, w)
			continue
		}
		v.Count(record, id.String()+" "+w, record+" left out: its wallet is not a member of the job's escrow", "job", id, "wallet", w)
	}
	return out, nil
}

// Count counts (jobmesh_processor_non_members_total{record}) and logs
// msg, the first time it is told of key, one record left out for naming
// a wallet that is not a member.
func (v *View) Count(record, key, msg string, args ...any) {
	k := record + " " + key
	v.mu.Lock()
	_, told := v.counted[k]
	if !told {
		if len(v.counted) >= maxCounted {
			clear(v.counted)
		}
		v.counted[k] = struct{}{}
	}
	v.mu.Unlock()
	if !told {
		v.left.WithLabelValues(record).Inc()
		v.log.Warn(msg, args...)
	}
}

// CountRefusal counts a job this processor does not work on because its
// escrow refused the join, for reason (JoinRefusal).
func (v *View) CountRefusal(reason string) {
	v.refused.WithLabelValues(reason).Inc()
}

// JoinRefusal names why the escrow refused a join, for the metric and the
// log; permanent is true when asking again cannot help.
func JoinRefusal(err error) (reason string, permanent bool) {
	switch {
	case errors.Is(err, escrow.ErrJoinClosed):
		return "closed", true
	case errors.Is(err, escrow.ErrTooManyMembers):
		return "full", true
	case errors.Is(err, escrow.ErrNotStaked):
		return "stake", false // it may stake yet
	}
	return "other", false
}
