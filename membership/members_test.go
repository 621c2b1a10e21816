package membership

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/escrow"
)

// TestMembersCacheKeepsYesAndAsksNoAgain: on a real escrow, a no is
// answered from the cache until its backoff is over (an account that
// joined meanwhile still reads as no), then read again, with a backoff
// that doubles; a yes is never read again. The reads are the escrow
// client's own isMember reads.
func TestMembersCacheKeepsYesAndAsksNoAgain(t *testing.T) {
	ctx := context.Background()
	sim, deploy, client := simEscrow(t)
	reg := prometheus.NewRegistry()
	reader := client(1, reg)
	reads := func() float64 { return isMemberReads(t, reg) }
	creator, a, b := client(2, nil), client(3, nil), client(4, nil)
	if _, err := creator.CreateJob(ctx, common.Hash{1}, escrow.SeedCommitment(common.Hash{2}), time.Now().Add(time.Hour),
		escrow.Terms{Quiet: time.Second, MinSigners: 1}, big.NewInt(1000)); err != nil {
		t.Fatal(err)
	}
	key := creator.KeyOf(common.Hash{1})
	for _, c := range []*escrow.Client{a, b} {
		if _, err := c.Stake(ctx, deploy.MinStake); err != nil {
			t.Fatal(err)
		}
	}

	const backoff = 10 * time.Second
	now := time.Unix(1_000_000, 0)
	m := NewMembers(reader, backoff)
	m.now = func() time.Time { return now }
	ask := func(c *escrow.Client, want bool, wantReads float64) {
		t.Helper()
		got, err := m.IsMember(ctx, key, c.From())
		if err != nil {
			t.Fatal(err)
		}
		if got != want || reads() != wantReads {
			t.Fatalf("at +%v: member %v after %v reads, want %v after %v", now.Sub(time.Unix(1_000_000, 0)), got, reads(), want, wantReads)
		}
	}
	ask(a, false, 1)
	if _, err := a.Join(ctx, key); err != nil {
		t.Fatal(err)
	}
	ask(a, false, 1) // the no is kept until its backoff is over
	now = now.Add(backoff)
	ask(a, true, 2) // asked again: it joined
	now = now.Add(time.Hour)
	ask(a, true, 2) // a yes is kept

	ask(b, false, 3)
	now = now.Add(backoff)
	ask(b, false, 4) // asked again after the first backoff
	if _, err := b.Join(ctx, key); err != nil {
		t.Fatal(err)
	}
	now = now.Add(backoff)
	ask(b, false, 4) // the second wait is twice as long
	now = now.Add(backoff)
	ask(b, true, 5)

	// Joined records a member without asking; a stranger stays out.
	stranger := ethcrypto.PubkeyToAddress(sim.Keys()[5].PublicKey)
	m.Joined(key, stranger)
	if ok, err := m.IsMember(ctx, key, stranger); err != nil || !ok || reads() != 5 {
		t.Fatalf("a recorded join: %v (%v), %v reads", ok, err, reads())
	}

	// A chain that does not answer: a cached no stands, a first read fails.
	outsider := ethcrypto.PubkeyToAddress(sim.Keys()[6].PublicKey)
	if ok, err := m.IsMember(ctx, key, outsider); err != nil || ok {
		t.Fatalf("an outsider: %v (%v)", ok, err)
	}
	if err := sim.Close(); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	if ok, err := m.IsMember(ctx, key, outsider); err != nil || ok {
		t.Fatalf("a recheck the chain does not answer: %v (%v), want the cached no", ok, err)
	}
	if _, err := m.IsMember(ctx, key, ethcrypto.PubkeyToAddress(sim.Keys()[7].PublicKey)); err == nil {
		t.Fatal("a first read the chain does not answer gave no error")
	}
}

// isMemberReads is how many isMember reads the escrow clients registered
// with reg have made.
func isMemberReads(t *testing.T, reg prometheus.Gatherer) float64 {
	t.Helper()
	return escrowReads(t, reg, "isMember")
}

// escrowReads counts the escrow client's reads of method in reg.
func escrowReads(t *testing.T, reg prometheus.Gatherer, method string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "jobmesh_escrow_reads_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "method" && l.GetValue() == method {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

// simEscrow deploys an escrow on a simulated chain closed with t, and
// returns the chain, the escrow's parameters and a maker of clients: client(i, reg) signs
// with dev key i and counts its reads in reg (nil: none).
func simEscrow(t *testing.T) (*escrow.SimChain, escrow.DeployParams, func(i int, reg prometheus.Registerer) *escrow.Client) {
	t.Helper()
	ctx := context.Background()
	sim, err := escrow.NewSimChain(escrow.DefaultDevChainConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	deploy := escrow.DefaultDeployParams()
	owner, _, err := escrow.Deploy(ctx, sim.Client(), sim.Transactor(0), deploy, escrow.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return sim, deploy, func(i int, reg prometheus.Registerer) *escrow.Client {
		cfg := escrow.DefaultConfig()
		cfg.Contract, cfg.Registerer = owner.Address(), reg
		c, err := escrow.New(ctx, sim.Client(), sim.Transactor(i), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
}
