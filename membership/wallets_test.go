package membership

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	libp2pcrypto "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

func walletOf(k *ecdsa.PrivateKey) string {
	return strings.ToLower(ethcrypto.PubkeyToAddress(k.PublicKey).Hex())
}

func newWalletKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ethcrypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// startWallets starts an enforcing view on store, stopped at cleanup.
func startWallets(t *testing.T, store crdt.Reader) (*Wallets, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	v := NewWallets(store, true, reg, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	if err := v.Start(ctx, &wg); err != nil {
		t.Fatal(err)
	}
	return v, reg
}

// TestWalletsViewOnReplicas runs the view on real replicas whose store
// enforces AuthorPolicy, beside an attacker replica that does not: a
// valid binding is taken in; a binding whose signature is not the claimed
// wallet's is refused and counted, once; a binding written under another
// peer's key is refused by the store and leaves the owner's binding in
// place; an older binding replayed does not undo a newer one.
func TestWalletsViewOnReplicas(t *testing.T) {
	const attacker = 2
	c := crdttest.New(t, crdttest.Options{Replicas: 3, Configure: func(i int, cfg *crdt.Config) {
		if i != attacker {
			cfg.AuthorPolicy = records.AuthorPolicy()
		}
	}})
	ctx := context.Background()
	honest, liar, evil := c.Replicas[0], c.Replicas[1], c.Replicas[attacker]
	honestKey, liarKey := newWalletKey(t), newWalletKey(t)
	v, reg := startWallets(t, c.Replicas[0].Store)
	refused := func(reason string) float64 {
		return crdttest.Metric(t, reg, "jobmesh_processor_wallet_bindings_refused_total", map[string]string{"reason": reason})
	}

	good, err := records.NewWalletBinding(honest.ID().String(), honestKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := crdt.PutJSON(ctx, honest.Store, records.WalletBindingKey(honest.ID().String()), records.WalletBindingType, good); err != nil {
		t.Fatal(err)
	}
	// The liar claims the honest wallet, signing with its own key.
	forged, _ := records.NewWalletBinding(liar.ID().String(), liarKey)
	forged.Wallet = walletOf(honestKey)
	if err := crdt.PutJSON(ctx, liar.Store, records.WalletBindingKey(liar.ID().String()), records.WalletBindingType, forged); err != nil {
		t.Fatal(err)
	}
	// A store with the policy refuses to write under another peer's key.
	err = crdt.PutJSON(ctx, liar.Store, records.WalletBindingKey(honest.ID().String()), records.WalletBindingType, forged)
	if !errors.Is(err, crdt.ErrPolicy) {
		t.Fatalf("write under another peer's key: %v, want crdt.ErrPolicy", err)
	}
	crdttest.WaitUntil(t, 20*time.Second, func() error {
		if w, ok := v.Bound(honest.ID().String()); !ok || w != walletOf(honestKey) {
			return fmt.Errorf("honest binding %q %v", w, ok)
		}
		if refused("signature") != 1 {
			return fmt.Errorf("%v signature refusals", refused("signature"))
		}
		return nil
	})
	if w, ok := v.Bound(liar.ID().String()); ok {
		t.Fatalf("the liar is bound to %s", w)
	}
	// Reloading (as after a watch overflow) verifies nothing again.
	if err := v.load(ctx); err != nil {
		t.Fatal(err)
	}
	if refused("signature") != 1 {
		t.Fatalf("%v signature refusals after a reload", refused("signature"))
	}

	// A forgery under the honest peer's key unbinds nobody.
	forgeBinding(t, c, attacker, honest.ID().String())
	if err := v.load(ctx); err != nil {
		t.Fatal(err)
	}
	if w, ok := v.Bound(honest.ID().String()); !ok || w != walletOf(honestKey) {
		t.Fatalf("after the forgery the honest peer is bound to %q (%v)", w, ok)
	}
	if _, ok := v.Bound(evil.ID().String()); ok {
		t.Fatal("the forger is bound through another peer's key")
	}

	// The liar rebinds to its own wallet: the newer record replaces the
	// refused one; the refused one replayed changes nothing.
	refusedRec, err := liar.Store.Get(ctx, records.WalletBindingKey(liar.ID().String()))
	if err != nil {
		t.Fatal(err)
	}
	own, _ := records.NewWalletBinding(liar.ID().String(), liarKey)
	if err := crdt.PutJSON(ctx, liar.Store, records.WalletBindingKey(liar.ID().String()), records.WalletBindingType, own); err != nil {
		t.Fatal(err)
	}
	crdttest.WaitUntil(t, 20*time.Second, func() error {
		if w, ok := v.Bound(liar.ID().String()); !ok || w != walletOf(liarKey) {
			return fmt.Errorf("liar binding %q %v", w, ok)
		}
		return nil
	})
	v.apply(refusedRec)
	if w, _ := v.Bound(liar.ID().String()); w != walletOf(liarKey) || refused("signature") != 1 {
		t.Fatalf("the older record replayed: the liar is bound to %q, %v refusals", w, refused("signature"))
	}
}

// forgeBinding has replica attacker, whose store has no policy, write its
// own valid binding under victim's key, on top of victim's binding so
// that its value is the newer, and waits until replica 0 has refused it.
func forgeBinding(t *testing.T, c *crdttest.Cluster, attacker int, victim string) {
	t.Helper()
	ctx := context.Background()
	evil := c.Replicas[attacker]
	c.WaitGet(attacker, records.WalletBindingKey(victim), nil)
	stolen, _ := records.NewWalletBinding(evil.ID().String(), newWalletKey(t))
	if err := crdt.PutJSON(ctx, evil.Store, records.WalletBindingKey(victim), records.WalletBindingType, stolen); err != nil {
		t.Fatal(err)
	}
	// A record after it: once it is in, so is the forgery.
	if err := evil.Store.Put(ctx, "/jobs/marker", "marker", nil); err != nil {
		t.Fatal(err)
	}
	c.WaitGet(0, "/jobs/marker", nil)
	crdttest.WaitUntil(t, 20*time.Second, func() error {
		if n := crdttest.Metric(t, c.Replicas[0].Registry, "jobmesh_crdt_records_rejected_total", map[string]string{"reason": "policy"}); n < 1 {
			return fmt.Errorf("%v policy rejections", n)
		}
		return nil
	})
}

// walletsFixture is an enforcing view holding the bindings of an honest
// processor and a liar, without a store.
type walletsFixture struct {
	v                   *Wallets
	reg                 *prometheus.Registry
	honest, liar        string // peer IDs
	honestW, liarW, foe string // wallets; foe is bound to nobody
}

func newWalletsFixture(t *testing.T) walletsFixture {
	t.Helper()
	f := walletsFixture{reg: prometheus.NewRegistry()}
	f.v = NewWallets(nil, true, f.reg, slog.New(slog.DiscardHandler))
	for i, k := range []*ecdsa.PrivateKey{newWalletKey(t), newWalletKey(t)} {
		id := newPeerIDInternal(t)
		wb, err := records.NewWalletBinding(id, k)
		if err != nil {
			t.Fatal(err)
		}
		rec := crdt.Record{Key: records.WalletBindingKey(id), Type: records.WalletBindingType, Seq: 10, Payload: mustJSON(t, wb)}
		rec.Author = mustPeer(t, id)
		f.v.apply(rec)
		if i == 0 {
			f.honest, f.honestW = id, wb.Wallet
		} else {
			f.liar, f.liarW = id, wb.Wallet
		}
	}
	f.foe = walletOf(newWalletKey(t))
	return f
}

func TestWalletsFilterLeavesOutUnboundDisclosures(t *testing.T) {
	f := newWalletsFixture(t)
	id := jobs.ID{7}
	d := func(micro byte, proc, wallet string) microjob.Disclosure {
		return microjob.Disclosure{Version: microjob.RecordVersion, JobID: id, MicroID: jobs.ID{micro}, Processor: proc, Wallet: wallet}
	}
	recs := finish.NewRecords()
	recs.Discl = []microjob.Disclosure{
		d(1, f.honest, f.honestW),
		d(2, f.liar, f.honestW), // the liar claims the honest wallet
		d(3, f.liar, f.liarW),
		d(4, f.honest, f.foe),          // a wallet bound to nobody
		d(5, "12D3KooWunbound", f.foe), // a processor with no binding
	}
	recs.DisclSeqs = []uint64{1, 2, 3, 4, 5}
	unbound := func() float64 {
		return crdttest.Metric(t, f.reg, "jobmesh_processor_unbound_wallets_total", map[string]string{"record": "disclosure"})
	}
	out := f.v.Filter(id, recs)
	if len(out.Discl) != 2 || out.Discl[0].MicroID != (jobs.ID{1}) || out.Discl[1].MicroID != (jobs.ID{3}) ||
		!slices.Equal(out.DisclSeqs, []uint64{1, 3}) {
		t.Fatalf("kept %+v (seqs %v)", out.Discl, out.DisclSeqs)
	}
	if len(recs.Discl) != 5 {
		t.Fatal("the shared records were modified")
	}
	if unbound() != 3 {
		t.Fatalf("%v disclosures counted, want 3", unbound())
	}
	// The same records again: the cached result, nothing counted twice.
	if again := f.v.Filter(id, recs); again != out || unbound() != 3 {
		t.Fatalf("second filter: new result %v, %v counted", again != out, unbound())
	}
	// Records that all hold pass through as they are.
	clean := finish.NewRecords()
	clean.Discl, clean.DisclSeqs = recs.Discl[:1], recs.DisclSeqs[:1]
	if f.v.Filter(id, clean) != clean {
		t.Fatal("records without a left-out disclosure were copied")
	}
	// Without a chain nothing is left out.
	off := NewWallets(nil, false, nil, slog.New(slog.DiscardHandler))
	if off.Filter(id, recs) != recs {
		t.Fatal("a chain-less view filtered")
	}
}

func TestWalletsCulpritsAndPayeesAreBound(t *testing.T) {
	f := newWalletsFixture(t)
	// Culprits are slashed through their bound wallets; one without a
	// binding through none, whatever its records claimed.
	got := f.v.CulpritWallets([]string{f.liar, "12D3KooWunbound", f.liar})
	if !slices.Equal(got, []string{f.liarW}) {
		t.Fatalf("culprit wallets %v, want only the liar's bound wallet", got)
	}
	id := jobs.ID{9}
	res := func(proc, wallet string) microjob.Result {
		return microjob.Result{MicroID: "m-" + proc, Processor: proc, Wallet: wallet}
	}
	ok := microjob.Verdict{Results: []microjob.Result{res(f.honest, f.honestW), res(f.liar, f.honestW)}, Culprits: []string{f.liar}}
	if err := f.v.CheckPayees(id, records.VerdictRecord{}, ok); err != nil {
		t.Fatalf("a culprit's claimed wallet blocked signing: %v", err)
	}
	bad := microjob.Verdict{Results: []microjob.Result{res(f.honest, f.honestW), res(f.liar, f.honestW)}}
	for range 2 {
		if err := f.v.CheckPayees(id, records.VerdictRecord{}, bad); !errors.Is(err, ErrUnboundPayee) {
			t.Fatalf("a payee claiming another's wallet: %v, want ErrUnboundPayee", err)
		}
	}
	if n := crdttest.Metric(t, f.reg, "jobmesh_processor_unbound_wallets_total", map[string]string{"record": "verdict"}); n != 1 {
		t.Fatalf("%v verdict refusals counted, want 1", n)
	}
}

func newPeerIDInternal(t *testing.T) string {
	t.Helper()
	_, pub, err := libp2pcrypto.GenerateEd25519Key(nil)
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return id.String()
}

func mustPeer(t *testing.T, s string) peer.ID {
	t.Helper()
	id, err := peer.Decode(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWalletsCountRefusedBindings applies forged binding records to a
// view: each is refused, binds nothing and is counted by reason; the
// valid one binds.
func TestWalletsCountRefusedBindings(t *testing.T) {
	reg := prometheus.NewRegistry()
	v := NewWallets(nil, true, reg, slog.New(slog.DiscardHandler))
	key, victim := newWalletKey(t), newWalletKey(t)
	record := func(author string, payload []byte) crdt.Record {
		return crdt.Record{Key: records.WalletBindingKey(author), Type: records.WalletBindingType, Author: mustPeer(t, author), Seq: 5, Payload: payload}
	}
	binding := func(peerID string, k *ecdsa.PrivateKey) records.WalletBinding {
		wb, err := records.NewWalletBinding(peerID, k)
		if err != nil {
			t.Fatal(err)
		}
		return wb
	}
	cases := map[string]struct {
		rec    func(self string) crdt.Record
		reason string
	}{
		"truncated": {func(self string) crdt.Record {
			b := mustJSON(t, binding(self, key))
			return record(self, b[:len(b)/2])
		}, "malformed"},
		"oversized": {func(self string) crdt.Record {
			b := mustJSON(t, binding(self, key))
			return record(self, append(b[:len(b)-1], []byte(`,"pad":"`+strings.Repeat("x", records.MaxWalletBinding)+`"}`)...))
		}, "malformed"},
		"another peer's binding": {func(self string) crdt.Record {
			return record(self, mustJSON(t, binding(newPeerIDInternal(t), victim)))
		}, "peer"},
		"signature by another key": {func(self string) crdt.Record {
			wb := binding(self, key)
			wb.Wallet = walletOf(victim)
			return record(self, mustJSON(t, wb))
		}, "signature"},
		"wrong peer in message": {func(self string) crdt.Record {
			wb := binding(newPeerIDInternal(t), victim)
			wb.Peer = self
			return record(self, mustJSON(t, wb))
		}, "signature"},
	}
	want := map[string]float64{}
	for name, c := range cases {
		self := newPeerIDInternal(t)
		v.apply(c.rec(self))
		want[c.reason]++
		if w, ok := v.Bound(self); ok {
			t.Errorf("%s: bound to %s", name, w)
		}
	}
	for reason, n := range want {
		if got := crdttest.Metric(t, reg, "jobmesh_processor_wallet_bindings_refused_total", map[string]string{"reason": reason}); got != n {
			t.Errorf("%s refusals: %v, want %v", reason, got, n)
		}
	}
	self := newPeerIDInternal(t)
	v.apply(record(self, mustJSON(t, binding(self, key))))
	if w, ok := v.Bound(self); !ok || w != walletOf(key) {
		t.Fatalf("valid binding: %q %v", w, ok)
	}
}

// repairCounting counts the repairs a view asks of its store.
type repairCounting struct {
	crdt.Reader
	asked int
}

func (r *repairCounting) RepairSoon() { r.asked++ }

// TestWalletsAskForARepairWhenABindingIsMissing: a disclosure whose
// processor has no binding here has the store repair at once; one that
// names the wrong wallet of a bound processor does not.
func TestWalletsAskForARepairWhenABindingIsMissing(t *testing.T) {
	f := newWalletsFixture(t)
	store := &repairCounting{}
	f.v.store = store
	id := jobs.ID{8}
	filter := func(micro byte, proc, wallet string) {
		recs := finish.NewRecords()
		recs.Discl = []microjob.Disclosure{{Version: microjob.RecordVersion, JobID: id, MicroID: jobs.ID{micro}, Processor: proc, Wallet: wallet}}
		recs.DisclSeqs = []uint64{1}
		f.v.Filter(id, recs)
	}
	filter(1, f.liar, f.honestW)
	filter(2, f.honest, f.honestW)
	if store.asked != 0 {
		t.Fatalf("%d repairs asked for bound processors", store.asked)
	}
	filter(3, "12D3KooWunbound", f.foe)
	if store.asked != 1 {
		t.Fatalf("%d repairs asked for a processor with no binding, want 1", store.asked)
	}
}
