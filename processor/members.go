package processor

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
	"github.com/jobmesh/jobmesh/membership"
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
//     once (chain.go);
//   - a disclosure whose wallet is not a member of the job is left out of
//     judging, as one whose wallet is not bound is (Wallets.filter): its
//     MicroJob is redone by members and its author is not paid. A
//     non-member risks no stake on the job, so its results prove nothing,
//     and paying it would make the contract refuse the settlement;
//   - a culprit whose wallet is not a member is not named (the contract
//     would refuse the settlement; there is no stake of the job to burn);
//   - every member that recomputes the verdict signs, and the quorum is
//     counted over the members as the contract counts it (chain.go).
//
// The answers come from a membership.Members cache over the chain.

// DisclosureFilter says whether a disclosure of job info counts in
// judging it (membership.KeepMembers returns one).
type DisclosureFilter func(ctx context.Context, info *jobs.JobInfo, d microjob.Disclosure) (bool, error)

// memberView is the worker's side of membership: the cached answers, and
// what it left out for not being a member, each counted and logged once.
type memberView struct {
	*membership.Members // nil without a chain: every wallet counts
	log                 *slog.Logger
	left                *prometheus.CounterVec
	refused             *prometheus.CounterVec

	mu       sync.Mutex
	counted  map[string]struct{}
	filtered map[jobs.ID]filteredRecords
}

func newMemberView(chain membership.MemberReader, backoff time.Duration, reg prometheus.Registerer, log *slog.Logger) *memberView {
	v := &memberView{
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
		v.Members = membership.NewMembers(chain, backoff)
	}
	if reg != nil {
		reg.MustRegister(v.left, v.refused)
	}
	return v
}

// version changes whenever a membership answer that filter depends on
// does; 0 without a chain.
func (v *memberView) version() uint64 {
	if v == nil || v.Members == nil {
		return 0
	}
	return v.Version()
}

// filter returns job js's records without the disclosures whose wallet
// is not a member of its escrow (recs itself when there are none, or
// without a chain). Like recs, the result is shared and must not be
// modified.
func (v *memberView) filter(ctx context.Context, js *jobState, recs *finish.Records) (*finish.Records, error) {
	if v == nil || v.Members == nil || js == nil {
		return recs, nil
	}
	id := js.plan.JobID
	ver := v.Version()
	v.mu.Lock()
	if c, ok := v.filtered[id]; ok && c.src == recs && c.version == ver {
		v.mu.Unlock()
		return c.out, nil
	}
	v.mu.Unlock()
	key := chainKey(js)
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
			v.count("disclosure", records.DisclosureKey(d)+" "+d.Wallet, "disclosure left out of judging: its wallet is not a member of the job's escrow",
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

// wallets returns those of list (0x wallets) that are members of job
// key, in order; each left out is counted once as record.
func (v *memberView) wallets(ctx context.Context, id jobs.ID, key common.Hash, list []string, record string) ([]string, error) {
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
		v.count(record, id.String()+" "+w, record+" left out: its wallet is not a member of the job's escrow", "job", id, "wallet", w)
	}
	return out, nil
}

// count counts and logs, the first time, one record left out.
func (v *memberView) count(record, key, msg string, args ...any) {
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

// joinRefusal names why the escrow refused a join, for the metric and the
// log; permanent is true when asking again cannot help.
func joinRefusal(err error) (reason string, permanent bool) {
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
