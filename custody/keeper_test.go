package custody

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
	"github.com/libp2p/go-libp2p/core/peer"
	ptest "github.com/libp2p/go-libp2p/core/test"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/ipfs"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/records"
)

var (
	_ Blocks  = (*ipfs.Node)(nil)
	_ Network = (*p2p.Host)(nil)
)

// memStore is a store of records in memory, written as self.
type memStore struct {
	mu   sync.Mutex
	self peer.ID
	recs map[string]crdt.Record
}

func (s *memStore) Self() peer.ID { return s.self }

func (s *memStore) Get(_ context.Context, key string) (crdt.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[key]
	if !ok {
		return crdt.Record{}, crdt.ErrNotFound
	}
	return r, nil
}

func (s *memStore) Query(_ context.Context, prefix string) ([]crdt.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []crdt.Record
	for k, r := range s.recs {
		if strings.HasPrefix(k, prefix) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *memStore) Put(_ context.Context, key, typ string, payload []byte) error {
	s.put(crdt.Record{Key: key, Type: typ, Author: s.self, Payload: payload})
	return nil
}

func (s *memStore) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.recs, key)
	return nil
}

func (s *memStore) put(r crdt.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs[r.Key] = r
}

// holds writes p's holder record of job id's output out.
func (s *memStore) holds(t *testing.T, id jobs.ID, p peer.ID, out cid.Cid) {
	t.Helper()
	payload, err := json.Marshal(records.Holder{Output: out.String()})
	if err != nil {
		t.Fatal(err)
	}
	s.put(crdt.Record{Key: records.HolderKey(id, p), Type: records.HolderType, Author: p, Payload: payload})
}

// fakeBlocks is a block layer that records what is pinned, stored and
// added; the methods it does not override must not be called.
type fakeBlocks struct {
	Blocks
	mu     sync.Mutex
	pinned map[cid.Cid]string
	put    []blocks.Block
	added  [][]byte
}

func (b *fakeBlocks) Pin(_ context.Context, c cid.Cid, owner string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pinned[c] = owner
	return nil
}

func (b *fakeBlocks) PutBlocks(_ context.Context, bs []blocks.Block) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.put = append(b.put, bs...)
	return nil
}

func (b *fakeBlocks) DAGService() ipld.DAGService { return nil }

func (b *fakeBlocks) AddFile(_ context.Context, r io.Reader) (cid.Cid, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return cid.Undef, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.added = append(b.added, data)
	return blocks.NewBlock(data).Cid(), nil
}

// fakeNetwork is connected to the peers in on.
type fakeNetwork struct{ on map[peer.ID]bool }

func (n fakeNetwork) Reach(context.Context, peer.ID) error { return nil }
func (n fakeNetwork) Connected(p peer.ID) bool             { return n.on[p] }

// fixture is a Keeper with a job written by creator.
type fixture struct {
	k       *Keeper
	store   *memStore
	blocks  *fakeBlocks
	net     fakeNetwork
	lonely  prometheus.Counter
	id      jobs.ID
	creator peer.ID
}

func newFixture(t *testing.T, cfg Config) *fixture {
	t.Helper()
	f := &fixture{
		store:   &memStore{self: ptest.RandPeerIDFatal(t), recs: map[string]crdt.Record{}},
		blocks:  &fakeBlocks{pinned: map[cid.Cid]string{}},
		net:     fakeNetwork{on: map[peer.ID]bool{}},
		lonely:  prometheus.NewCounter(prometheus.CounterOpts{Name: "lonely"}),
		id:      jobs.ID{1},
		creator: ptest.RandPeerIDFatal(t),
	}
	f.store.put(crdt.Record{Key: records.JobKey(f.id), Type: records.JobType, Author: f.creator})
	k, err := New(context.Background(), Params{Store: f.store, Writer: f.store, Blocks: f.blocks, Network: f.net, SingleHolder: f.lonely}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	f.k = k
	return f
}

func outputCID(s string) cid.Cid { return blocks.NewBlock([]byte(s)).Cid() }

func TestHandedOffToTheCreatorWhenConnected(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Config{HoldWait: time.Minute})
	v := microjob.Verdict{JobID: f.id.String(), Verified: true}
	out, t0 := outputCID("output"), time.Unix(1000, 0)
	f.k.held(f.id, sha256.Sum256(v.Encode()), t0)
	f.net.on[f.creator] = true
	other := ptest.RandPeerIDFatal(t)
	f.store.holds(t, f.id, f.store.self, out)
	f.store.holds(t, f.id, other, out)
	if ok, err := f.k.HandedOff(ctx, f.id, v, out, t0.Add(time.Second)); err != nil || ok {
		t.Fatalf("handed off to %s while the creator is connected: %v, %v", other, ok, err)
	}
	f.store.holds(t, f.id, f.creator, outputCID("another output"))
	if ok, _ := f.k.HandedOff(ctx, f.id, v, out, t0.Add(time.Second)); ok {
		t.Fatal("handed off to a creator that holds another output")
	}
	f.store.holds(t, f.id, f.creator, out)
	if ok, err := f.k.HandedOff(ctx, f.id, v, out, t0.Add(time.Second)); err != nil || !ok {
		t.Fatalf("the creator holds the output: %v, %v", ok, err)
	}
	if n := testutil.ToFloat64(f.lonely); n != 0 {
		t.Fatalf("%v single-holder verdicts counted", n)
	}
}

func TestHandedOffToAnyNodeWhenTheCreatorIsGone(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Config{HoldWait: time.Minute})
	v := microjob.Verdict{JobID: f.id.String(), Verified: true}
	out, t0 := outputCID("output"), time.Unix(1000, 0)
	f.k.held(f.id, sha256.Sum256(v.Encode()), t0)
	f.store.holds(t, f.id, f.store.self, out)
	if ok, _ := f.k.HandedOff(ctx, f.id, v, out, t0.Add(time.Second)); ok {
		t.Fatal("handed off with this node the only holder")
	}
	f.store.holds(t, f.id, ptest.RandPeerIDFatal(t), out)
	if ok, err := f.k.HandedOff(ctx, f.id, v, out, t0.Add(time.Second)); err != nil || !ok {
		t.Fatalf("another node holds the output: %v, %v", ok, err)
	}
}

func TestHandedOffAfterHoldWaitCountsOnce(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Config{HoldWait: time.Minute})
	v := microjob.Verdict{JobID: f.id.String(), Verified: true}
	out, t0 := outputCID("output"), time.Unix(1000, 0)
	f.k.held(f.id, sha256.Sum256(v.Encode()), t0)
	if ok, _ := f.k.HandedOff(ctx, f.id, v, out, t0.Add(time.Minute-time.Nanosecond)); ok {
		t.Fatal("handed off before HoldWait is over")
	}
	for range 2 {
		if ok, err := f.k.HandedOff(ctx, f.id, v, out, t0.Add(time.Minute)); err != nil || !ok {
			t.Fatalf("HoldWait is over: %v, %v", ok, err)
		}
	}
	if n := testutil.ToFloat64(f.lonely); n != 1 {
		t.Fatalf("%v single-holder verdicts counted, want 1", n)
	}
	g := newFixture(t, Config{})
	if ok, err := g.k.HandedOff(ctx, g.id, v, out, t0); err != nil || !ok {
		t.Fatalf("HoldWait 0 waits: %v, %v", ok, err)
	}
}

func TestRunnerUpWaitsForTheFinalizersHolderRecord(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Config{HoldWait: time.Minute})
	first := ptest.RandPeerIDFatal(t)
	j := finish.Judgement{V: microjob.Verdict{JobID: f.id.String(), Verified: true}, Order: []string{first.String(), f.store.self.String()}}
	asked := 0
	final := func(context.Context) (bool, error) { asked++; return false, nil }
	if err := f.k.HoldSecond(ctx, nil, &jobs.Plan{JobID: f.id}, j, finish.NewRecords(), final); err != nil {
		t.Fatal(err)
	}
	if asked != 0 || f.k.HoldDue(ctx, f.id) {
		t.Fatalf("due before the finalizer's holder record (final asked %d times)", asked)
	}
	f.store.holds(t, f.id, first, outputCID("output"))
	if !f.k.HoldDue(ctx, f.id) {
		t.Fatal("not due once the finalizer's holder record is in")
	}
	f.net.on[f.creator] = true
	if f.k.HoldDue(ctx, f.id) {
		t.Fatal("due while the creator's node is connected")
	}
	delete(f.net.on, f.creator)
	if err := f.k.HoldSecond(ctx, nil, &jobs.Plan{JobID: f.id}, j, finish.NewRecords(), final); err != nil {
		t.Fatal(err)
	}
	if asked != 1 {
		t.Fatalf("final asked %d times, want 1", asked)
	}
	j.Order = []string{first.String(), ptest.RandPeerIDFatal(t).String(), f.store.self.String()}
	if err := f.k.HoldSecond(ctx, nil, &jobs.Plan{JobID: f.id}, j, finish.NewRecords(), final); err != nil || f.k.HoldDue(ctx, f.id) {
		t.Fatalf("the third in order holds: %v", err)
	}
}

func TestVerdictRecordInlineOrBody(t *testing.T) {
	ctx := context.Background()
	rec := records.VerdictRecord{Verdict: json.RawMessage(`{"version":1}`), Output: outputCID("output").String()}
	f := newFixture(t, Config{})
	got, err := f.k.VerdictRecord(ctx, f.id, rec)
	if err != nil || got.Body != "" || !bytes.Equal(got.Verdict, rec.Verdict) {
		t.Fatalf("a small record is not inline: %+v, %v", got, err)
	}
	f = newFixture(t, Config{MaxInlineVerdict: 1})
	got, err = f.k.VerdictRecord(ctx, f.id, rec)
	if err != nil || got.Body == "" || got.Verdict != nil || len(f.blocks.added) != 1 {
		t.Fatalf("a large record keeps no body: %+v, %v", got, err)
	}
	body, _ := cid.Decode(got.Body)
	if owner := f.blocks.pinned[body]; owner != records.JobPinOwner(f.id) {
		t.Fatalf("the body is pinned for %q", owner)
	}
	k, err := New(ctx, Params{Store: f.store, Writer: f.store}, Config{MaxInlineVerdict: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.VerdictRecord(ctx, f.id, rec); !errors.Is(err, records.ErrBodyUnavailable) {
		t.Fatalf("a body with no block layer: %v", err)
	}
	if k.Bodies() != nil {
		t.Fatal("a body reader with no block layer")
	}
}

func TestPrefetchStoresInlineResultsOnce(t *testing.T) {
	f := newFixture(t, Config{})
	honest, liar := ptest.RandPeerIDFatal(t).String(), ptest.RandPeerIDFatal(t).String()
	recs := finish.NewRecords()
	recs.Discl = []microjob.Disclosure{
		{Processor: honest, Inline: []blocks.Block{blocks.NewBlock([]byte("honest"))}},
		{Processor: liar, Inline: []blocks.Block{blocks.NewBlock([]byte("liar"))}},
	}
	v := microjob.Verdict{JobID: f.id.String(), Verified: true, Culprits: []string{liar}}
	done := f.k.Prefetch(f.id, v, recs)
	<-done
	if again := f.k.Prefetch(f.id, v, recs); again != done {
		t.Fatal("prefetched twice")
	}
	if len(f.blocks.put) != 1 || string(f.blocks.put[0].RawData()) != "honest" {
		t.Fatalf("stored %v, want the honest result only", f.blocks.put)
	}
	k, err := New(context.Background(), Params{Store: f.store, Writer: f.store}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	<-k.Prefetch(f.id, v, recs)
}

func TestPinSkipsUndefined(t *testing.T) {
	f := newFixture(t, Config{})
	f.k.Pin(context.Background(), f.id, cid.Undef)
	c := outputCID("result")
	f.k.Pin(context.Background(), f.id, c)
	if len(f.blocks.pinned) != 1 || f.blocks.pinned[c] != records.JobPinOwner(f.id) {
		t.Fatalf("pinned %v", f.blocks.pinned)
	}
}
