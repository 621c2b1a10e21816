package membership

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// Wallets is the verified view of the mesh's wallet bindings (peer ID →
// bound wallet), and the rules that make money follow it rather than
// what records claim:
//
//   - a disclosure whose wallet is not its author's bound wallet is left
//     out of judging, as if it had never been written (Filter): its
//     MicroJob is redone and its author is not paid;
//   - a culprit's wallet for slashing is its bound wallet, never one a
//     disclosure names (CulpritWallets);
//   - a verdict that would pay a result to a wallet not bound to that
//     result's processor is not signed (CheckPayees).
//
// It follows /nodes with one watch; each binding record is verified
// (ecrecover) once, when it arrives, and refused ones are counted. The
// rules are enforced only when the mesh has a chain: without one nothing
// is paid or slashed, so no binding is needed and records are judged as
// they are. A wallet bound by several peers stays bound to each (one
// operator may run several nodes on one wallet).
type Wallets struct {
	store   crdt.Reader
	log     *slog.Logger
	enforce bool
	m       walletMetrics

	mu    sync.RWMutex
	bound map[string]verified // by peer
	// version changes whenever bound does (the filter's cache key).
	version uint64
	// counted are the left-out disclosures already counted and logged.
	counted map[string]struct{}
	// filtered caches, for jobs with left-out disclosures, the last
	// filtered records and what they were derived from.
	filtered map[jobs.ID]filteredRecords
	// refusedVerdicts are the jobs whose verdict CheckPayees refused.
	refusedVerdicts map[jobs.ID]struct{}
}

// verified is one binding record as checked: its seq and, when it
// verified, its wallet ("" for a refused record).
type verified struct {
	seq    uint64
	wallet string
}

type filteredRecords struct {
	src     *finish.Records
	version uint64
	out     *finish.Records
}

// Bounds of the view's bookkeeping; past them it starts over (a record
// may then be counted twice).
const (
	maxCounted  = 1 << 16
	maxFiltered = 256
)

type walletMetrics struct {
	refused *prometheus.CounterVec
	unbound *prometheus.CounterVec
}

func newWalletMetrics(reg prometheus.Registerer) walletMetrics {
	m := walletMetrics{
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "wallet_bindings_refused_total",
			Help: "Wallet binding records refused, by reason (malformed, peer: names another peer than its author, signature: does not recover to the claimed wallet).",
		}, []string{"reason"}),
		unbound: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "processor", Name: "unbound_wallets_total",
			Help: "Records naming a wallet that is not their processor's bound wallet, by record (disclosure: left out of judging; verdict: not signed), each counted once.",
		}, []string{"record"}),
	}
	if reg != nil {
		reg.MustRegister(m.refused, m.unbound)
	}
	return m
}

// repairer is a store that can be asked to repair missed updates before
// its repair interval (crdt.Store).
type repairer interface{ RepairSoon() }

// ErrUnboundPayee: a verdict credits a result to a wallet that is not its
// processor's bound wallet.
var ErrUnboundPayee = errors.New("membership: verdict pays a wallet not bound to its processor")

// NewWallets returns a view of store's bindings; enforce turns its rules
// on (a mesh with a chain). Start loads it.
func NewWallets(store crdt.Reader, enforce bool, reg prometheus.Registerer, log *slog.Logger) *Wallets {
	return &Wallets{
		store: store, log: log, enforce: enforce, m: newWalletMetrics(reg),
		bound: map[string]verified{}, counted: map[string]struct{}{},
		filtered: map[jobs.ID]filteredRecords{}, refusedVerdicts: map[jobs.ID]struct{}{},
	}
}

// Start loads the bindings and follows them until ctx ends; wg tracks
// the follower. The watch starts before the load, so no change is missed.
func (v *Wallets) Start(ctx context.Context, wg *sync.WaitGroup) error {
	changes := v.store.Watch(ctx, records.NodesPrefix)
	if err := v.load(ctx); err != nil {
		return fmt.Errorf("membership: loading wallet bindings: %w", err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for c := range changes {
			switch c.Kind {
			case crdt.ChangeOverflow:
				if err := v.load(ctx); err != nil && ctx.Err() == nil {
					v.log.Warn("reloading wallet bindings", "err", err)
				}
			case crdt.ChangePut:
				v.apply(c.Record)
			}
		}
	}()
	return nil
}

// load reads every binding in the store, verifying only the records newer
// than those verified before.
func (v *Wallets) load(ctx context.Context) error {
	recs, err := v.store.Query(ctx, records.NodesPrefix)
	if err != nil {
		return err
	}
	for _, r := range recs {
		v.apply(r)
	}
	return nil
}

// apply takes in one record under /nodes. A binding is verified unless
// its seq is not above that of the peer's last one: that record was
// verified already, or this is an older one replayed. A binding stands
// until its peer writes a newer one; deletions and absences are ignored,
// since the peer never deletes it, and a value another peer forged under
// its key hides it from reads (the store rejects the forgery) without
// unbinding it here.
func (v *Wallets) apply(r crdt.Record) {
	k, err := records.Parse(r.Key)
	if err != nil || k.Type != records.WalletBindingType {
		return
	}
	p := k.Peer
	v.mu.RLock()
	prev, seen := v.bound[p]
	v.mu.RUnlock()
	if seen && r.Seq <= prev.seq {
		return
	}
	got := verified{seq: r.Seq}
	wb, err := records.OpenWalletBinding(r)
	if err == nil {
		got.wallet = wb.Wallet
	} else {
		reason := "malformed"
		switch {
		case errors.Is(err, records.ErrBindingPeer):
			reason = "peer"
		case errors.Is(err, records.ErrBindingSignature):
			reason = "signature"
		}
		v.m.refused.WithLabelValues(reason).Inc()
		v.log.Warn("wallet binding refused", "peer", p, "author", r.Author, "reason", reason, "err", err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if cur, ok := v.bound[p]; ok && cur.seq >= got.seq {
		return // a newer one came in meanwhile
	}
	v.bound[p] = got
	v.version++
}

// Version changes whenever a binding does.
func (v *Wallets) Version() uint64 {
	if v == nil {
		return 0
	}
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.version
}

// Bound returns peerID's verified bound wallet.
func (v *Wallets) Bound(peerID string) (string, bool) {
	if v == nil {
		return "", false
	}
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.boundLocked(peerID)
}

func (v *Wallets) boundLocked(peerID string) (string, bool) {
	b := v.bound[peerID]
	return b.wallet, b.wallet != ""
}

// Filter returns job id's records without the disclosures whose wallet is
// not their author's bound wallet (recs itself when there are none, or
// when the rules are off). Each left-out disclosure is counted and logged
// once. Like recs, the result is shared and must not be modified.
func (v *Wallets) Filter(id jobs.ID, recs *finish.Records) *finish.Records {
	if v == nil || !v.enforce {
		return recs
	}
	v.mu.RLock()
	first := slices.IndexFunc(recs.Discl, func(d microjob.Disclosure) bool {
		w, ok := v.boundLocked(d.Processor)
		return !ok || w != d.Wallet
	})
	if first < 0 {
		v.mu.RUnlock()
		return recs
	}
	if c, ok := v.filtered[id]; ok && c.src == recs && c.version == v.version {
		v.mu.RUnlock()
		return c.out
	}
	v.mu.RUnlock()

	v.mu.Lock()
	defer v.mu.Unlock()
	out := *recs
	out.Discl = slices.Clone(recs.Discl[:first])
	out.DisclSeqs = slices.Clone(recs.DisclSeqs[:first])
	missing := false
	for i := first; i < len(recs.Discl); i++ {
		d := recs.Discl[i]
		w, ok := v.boundLocked(d.Processor)
		if ok && w == d.Wallet {
			out.Discl = append(out.Discl, d)
			out.DisclSeqs = append(out.DisclSeqs, recs.DisclSeqs[i])
			continue
		}
		missing = missing || !ok
		v.countLocked(id, d)
	}
	if r, ok := v.store.(repairer); ok && missing {
		// A processor writes its binding before any result, so a result
		// whose processor has none here most likely means this replica
		// missed an update: have the store repair now rather than at its
		// interval, while the result still waits to be judged.
		r.RepairSoon()
	}
	if len(v.filtered) >= maxFiltered {
		clear(v.filtered)
	}
	v.filtered[id] = filteredRecords{src: recs, version: v.version, out: &out}
	return &out
}

// countLocked counts and logs a left-out disclosure the first time.
func (v *Wallets) countLocked(id jobs.ID, d microjob.Disclosure) {
	k := records.DisclosureKey(d) + " " + d.Wallet
	if _, ok := v.counted[k]; ok {
		return
	}
	if len(v.counted) >= maxCounted {
		clear(v.counted)
	}
	v.counted[k] = struct{}{}
	v.m.unbound.WithLabelValues("disclosure").Inc()
	bound, _ := v.boundLocked(d.Processor)
	v.log.Warn("disclosure left out of judging: its wallet is not its processor's bound wallet",
		"job", id, "micro", d.MicroID, "processor", d.Processor, "claims", d.Wallet, "bound", bound)
}

// CulpritWallets are the bound wallets of culprits, distinct and sorted;
// a culprit without a binding names none.
func (v *Wallets) CulpritWallets(culprits []string) []string {
	var out []string
	for _, c := range culprits {
		if w, ok := v.Bound(c); ok {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// CheckPayees refuses (ErrUnboundPayee) a verdict that credits a result
// (one whose processor is not a culprit of rec or verdict) to a wallet
// that is not the result's processor's bound wallet. A refusal is counted
// and logged once per job.
func (v *Wallets) CheckPayees(id jobs.ID, rec records.VerdictRecord, verdict microjob.Verdict) error {
	if v == nil || !v.enforce {
		return nil
	}
	culprit := map[string]bool{}
	for _, c := range append(slices.Clone(rec.Culprits), verdict.Culprits...) {
		culprit[c] = true
	}
	for _, r := range verdict.Results {
		if culprit[r.Processor] {
			continue
		}
		if w, ok := v.Bound(r.Processor); ok && w == r.Wallet {
			continue
		}
		v.mu.Lock()
		if _, told := v.refusedVerdicts[id]; !told {
			if len(v.refusedVerdicts) >= maxFiltered {
				clear(v.refusedVerdicts)
			}
			v.refusedVerdicts[id] = struct{}{}
			v.m.unbound.WithLabelValues("verdict").Inc()
			v.log.Warn("not signing: the verdict pays a wallet not bound to its processor", "job", id, "micro", r.MicroID, "processor", r.Processor, "wallet", r.Wallet)
		}
		v.mu.Unlock()
		return fmt.Errorf("%w: result of %s for %s pays %s", ErrUnboundPayee, r.MicroID, r.Processor, r.Wallet)
	}
	return nil
}
