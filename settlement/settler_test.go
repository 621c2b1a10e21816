package settlement

import (
	"context"
	"errors"
	"log/slog"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/records/recordstest"
)

// fakeChain is an escrow whose job is funded with three members and a
// two-thirds quorum; settle closes it.
type fakeChain struct {
	mu      sync.Mutex
	job     escrow.Job
	now     time.Time
	settles [][]escrow.SignedBy
	settled escrow.Settlement // the last one sent
}

func newFakeChain() *fakeChain {
	return &fakeChain{
		job: escrow.Job{State: escrow.JobFunded, Members: 3, LastJoin: time.Unix(1000, 0), Terms: escrow.Terms{Quiet: time.Minute, MinSigners: 1}},
		now: time.Unix(2000, 0),
	}
}

func (c *fakeChain) Job(context.Context, common.Hash) (escrow.Job, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.job, nil
}

func (c *fakeChain) Now(context.Context) (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now, nil
}

func (c *fakeChain) Domain() escrow.Domain { return escrow.Domain{ChainID: big.NewInt(1337)} }

func (c *fakeChain) Quorum(context.Context) (*big.Int, *big.Int, error) {
	return big.NewInt(2), big.NewInt(3), nil
}

func (c *fakeChain) Settle(_ context.Context, st escrow.Settlement, sigs []escrow.SignedBy) (*types.Receipt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.job.State != escrow.JobFunded {
		return nil, escrow.ErrJobNotFunded
	}
	c.job.State, c.settled = escrow.JobSettled, st
	c.settles = append(c.settles, sigs)
	return &types.Receipt{TxHash: common.Hash{1}, BlockNumber: big.NewInt(7)}, nil
}

// fakeStore holds the settlement records the settlers write; as
// Verdicts, it stands behind the payout fixture's verdict.
type fakeStore struct {
	mu      sync.Mutex
	recs    map[string]fakeRecord
	rec     records.VerdictRecord
	verdict microjob.Verdict
}

type fakeRecord struct {
	typ     string
	payload []byte
}

func (s *fakeStore) Put(_ context.Context, key, typ string, payload []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs[key] = fakeRecord{typ, payload}
	return nil
}

func (s *fakeStore) PutBatch(ctx context.Context, es []crdt.Entry) error {
	for _, e := range es {
		if err := s.Put(ctx, e.Key, e.Type, e.Payload); err != nil {
			return err
		}
	}
	return nil
}

func (s *fakeStore) Records(context.Context, jobs.ID) (*finish.Records, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := finish.NewRecords()
	for _, r := range s.recs {
		switch r.typ {
		case records.SettlementType:
			p, err := records.DecodeSettlementRecord(r.payload)
			if err != nil {
				return nil, err
			}
			out.Proposal = &p
		case records.SignatureType:
			sig, err := records.DecodeSignatureRecord(r.payload)
			if err != nil {
				return nil, err
			}
			out.Sigs = append(out.Sigs, sig)
		case records.SettledType:
			out.Settled = true
		}
	}
	return out, nil
}

func (s *fakeStore) Audit(context.Context, jobs.ID, *finish.Records) (records.VerdictRecord, microjob.Verdict, error) {
	return s.rec, s.verdict, nil
}

// everyone is a member, every wallet bound.
type everyone struct{}

func (everyone) IsMember(context.Context, common.Hash, common.Address) (bool, error) {
	return true, nil
}
func (everyone) Wallets(_ context.Context, _ jobs.ID, _ common.Hash, list []string, _ string) ([]string, error) {
	return list, nil
}
func (everyone) Count(string, string, string, ...any)                               {}
func (everyone) CheckPayees(jobs.ID, records.VerdictRecord, microjob.Verdict) error { return nil }
func (everyone) CulpritWallets([]string) []string                                   { return nil }

// newSettler is a settler on chain and store, signing with a new key, on
// a clock that now reads.
func newSettler(t *testing.T, chain *fakeChain, store *fakeStore, self string, now *time.Time) *Settler {
	t.Helper()
	key, err := ethcrypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(context.Background(), Params{
		Chain: chain, Key: key, Self: self, Store: store, Verdicts: store, Members: everyone{}, Wallets: everyone{},
		Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return *now },
	}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newFixture(t *testing.T) (*fakeChain, *fakeStore, Job) {
	info, rec, v := recordstest.PayoutFixture(t)
	store := &fakeStore{recs: map[string]fakeRecord{}, rec: rec, verdict: v}
	return newFakeChain(), store, Job{ID: info.ID(), Info: info, FinishedAt: time.Unix(1, 0)}
}

// step takes a step of j on s and checks what it returns.
func step(t *testing.T, s *Settler, j Job, wantDone bool, wantErr error) {
	t.Helper()
	done, err := s.Step(context.Background(), j)
	if done != wantDone || (wantErr == nil) != (err == nil) || (wantErr != nil && !errors.Is(err, wantErr)) {
		t.Fatalf("step: done %v, err %v; want %v, %v", done, err, wantDone, wantErr)
	}
}

// TestSettlerProposesSignsAndSubmits walks one job through its
// settlement: the finalizer proposes and signs, waits for a quorum of
// members, and submits once a second member has signed; the job is then
// done for both.
func TestSettlerProposesSignsAndSubmits(t *testing.T) {
	chain, store, j := newFixture(t)
	now := time.Unix(5000, 0)
	fin, other := newSettler(t, chain, store, "fin", &now), newSettler(t, chain, store, "other", &now)
	fj := j
	fj.Finalizer = true

	step(t, other, j, false, nil) // no proposal: a non-finalizer waits
	if len(store.recs) != 0 {
		t.Fatalf("a non-finalizer wrote %d records", len(store.recs))
	}
	step(t, fin, fj, false, nil) // proposes
	step(t, fin, fj, false, nil) // signs
	step(t, fin, fj, false, ErrNoQuorum)
	signed, members, settled, err := fin.Status(context.Background(), fj)
	if err != nil || signed != 1 || members != 3 || settled {
		t.Fatalf("status: %d of %d signed, settled %v (%v)", signed, members, settled, err)
	}
	step(t, other, j, false, nil) // signs
	step(t, other, j, false, nil) // a quorum, but not its turn to submit
	step(t, fin, fj, true, nil)   // submits
	if len(chain.settles) != 1 || len(chain.settles[0]) != 2 {
		t.Fatalf("settles %v, want one with two signatures", chain.settles)
	}
	if _, ok := store.recs[records.SettledKey(j.ID)]; !ok {
		t.Fatal("no settled record")
	}
	step(t, other, j, true, nil)
}

// TestSettlerWritesTheOutcomeSummary: the processor whose settle
// transaction succeeded writes the job's outcome summary, which passes
// the check against what it sent to the chain.
func TestSettlerWritesTheOutcomeSummary(t *testing.T) {
	chain, store, j := newFixture(t)
	_, rec, v := recordstest.SpeedFixture(t)
	rec, ids := recordstest.WithPeerIDs(t, rec)
	store.rec, store.verdict = rec, v
	now := time.Unix(5000, 0)
	fin, other := newSettler(t, chain, store, ids["p0"], &now), newSettler(t, chain, store, ids["p1"], &now)
	fj := j
	fj.Finalizer = true
	step(t, fin, fj, false, nil) // proposes
	step(t, fin, fj, false, nil) // signs
	step(t, other, j, false, nil)
	step(t, fin, fj, true, nil) // submits
	r, ok := store.recs[records.SummaryKey(j.ID, ids["p0"])]
	if !ok || r.typ != records.SummaryType {
		t.Fatalf("no summary record: %v", store.recs)
	}
	sum, err := records.DecodeSummaryRecord(r.payload)
	if err != nil {
		t.Fatal(err)
	}
	rel := &escrow.Release{ResultRoot: chain.settled.ResultRoot, VerifierHash: chain.settled.VerifierHash, TxHash: common.Hash{1}, Block: 7}
	if err := CheckSummary(sum, rel); err != nil {
		t.Fatal(err)
	}
	if len(sum.Rounds) != 2 || len(sum.Culprits) != 1 || sum.Culprits[0] != ids["p2"] {
		t.Fatalf("summary %+v", sum)
	}
}

// TestSettlerWaitsThenStepsIn: a finalizer waits out the quiet period
// after the last join; a member that signed submits itself once a quorum
// has stood unsubmitted for Fallback.
func TestSettlerWaitsThenStepsIn(t *testing.T) {
	chain, store, j := newFixture(t)
	now := time.Unix(5000, 0)
	fin, a := newSettler(t, chain, store, "fin", &now), newSettler(t, chain, store, "a", &now)
	fj := j
	fj.Finalizer = true
	step(t, fin, fj, false, nil) // proposes
	step(t, fin, fj, false, nil) // signs
	step(t, a, j, false, nil)    // signs
	chain.now = chain.job.SettleOpensAt().Add(-time.Second)
	step(t, fin, fj, false, ErrNotOpen)
	step(t, a, j, false, nil) // a quorum, first seen now
	now = now.Add(DefaultConfig().Fallback)
	chain.now = chain.job.SettleOpensAt()
	step(t, a, j, true, nil) // steps in
	if len(chain.settles) != 1 {
		t.Fatalf("%d settles, want 1", len(chain.settles))
	}
	step(t, fin, fj, true, nil)
}
