package escrow

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"
)

var oneEther = big.NewInt(params.Ether)

func ether(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), oneEther) }

func milli(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(params.Ether/1000)) }

// harness is a simulated chain with a deployed escrow and one client per
// dev account. When the test ends it checks that value was conserved.
type harness struct {
	t       testing.TB
	ctx     context.Context
	chain   *SimChain
	backend Backend
	params  DeployParams
	clients []*Client // clients[i] signs with dev key i; clients[0] deployed
	keys    []*ecdsa.PrivateKey
	extra   []common.Address // contracts whose balances count too
	jobs    []common.Hash    // every job created, for the contract's books
	initial *big.Int
}

func testConfig() Config {
	cfg := DefaultConfig()
	cfg.ReceiptPoll = 5 * time.Millisecond
	cfg.ReleasePoll = 5 * time.Millisecond
	cfg.Retry = Retry{Attempts: 4, Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond}
	return cfg
}

func newHarness(t testing.TB, accounts int) *harness {
	t.Helper()
	ctx := t.Context()
	dc := DefaultDevChainConfig()
	dc.Accounts = accounts
	chain, err := NewSimChain(dc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chain.Close() })
	h := &harness{t: t, ctx: ctx, chain: chain, backend: chain.Client(), keys: chain.Keys()}
	h.params = DefaultDeployParams()
	h.params.UnstakeCooldown = time.Hour
	h.initial = new(big.Int).Mul(dc.Balance, big.NewInt(int64(accounts)))

	deployer, _, err := Deploy(ctx, h.backend, chain.Transactor(0), h.params, testConfig())
	if err != nil {
		t.Fatalf("deploy: %v", err)
	}
	h.clients = append(h.clients, deployer)
	for i := 1; i < accounts; i++ {
		cfg := testConfig()
		cfg.Contract = deployer.Address()
		cfg.ChainID = big.NewInt(DevChainID)
		c, err := New(ctx, h.backend, chain.Transactor(i), cfg)
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		h.clients = append(h.clients, c)
	}
	t.Cleanup(h.checkConservation)
	return h
}

func (h *harness) addr(i int) common.Address { return crypto.PubkeyToAddress(h.keys[i].PublicKey) }

func (h *harness) keyOf(a common.Address) *ecdsa.PrivateKey {
	for i := range h.keys {
		if h.addr(i) == a {
			return h.keys[i]
		}
	}
	h.t.Fatalf("no dev key for %s", a)
	return nil
}

func ethCall(to common.Address, data []byte) ethereum.CallMsg {
	return ethereum.CallMsg{To: &to, Data: data}
}

// headTime is the chain's current block time.
func (h *harness) headTime() time.Time {
	hd, err := h.backend.HeaderByNumber(h.ctx, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return time.Unix(int64(hd.Time), 0)
}

func (h *harness) balance(a common.Address) *big.Int {
	b, err := h.chain.sim.Client().BalanceAt(h.ctx, a, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

// createJob has client i fund a job with a fresh seed; it returns the job
// ID and the seed.
func (h *harness) createJob(i int, price *big.Int, ttl time.Duration) (common.Hash, common.Hash) {
	h.t.Helper()
	jobID := common.BytesToHash(crypto.Keccak256([]byte(h.t.Name()), big.NewInt(int64(len(h.jobs))).Bytes()))
	seed := crypto.Keccak256Hash(jobID[:], []byte("seed"))
	rcpt, err := h.clients[i].CreateJob(h.ctx, jobID, SeedCommitment(seed), h.headTime().Add(ttl), price)
	if err != nil {
		h.t.Fatalf("createJob: %v", err)
	}
	h.expectEvents(rcpt, "JobCreated")
	h.jobs = append(h.jobs, jobID)
	return jobID, seed
}

func (h *harness) stake(i int, amount *big.Int) {
	h.t.Helper()
	rcpt, err := h.clients[i].Stake(h.ctx, amount)
	if err != nil {
		h.t.Fatalf("stake %d: %v", i, err)
	}
	h.expectEvents(rcpt, "Staked")
}

// settlement builds a settlement paying each of the given accounts amount.
func (h *harness) settlement(jobID, seed common.Hash, amount *big.Int, payees []int, culprits []int) Settlement {
	pay := map[common.Address]*big.Int{}
	for _, i := range payees {
		pay[h.addr(i)] = amount
	}
	var cs []common.Address
	for _, i := range culprits {
		cs = append(cs, h.addr(i))
	}
	return NewSettlement(jobID, seed, common.Hash{0xaa}, common.Hash{0xbb}, pay, cs)
}

// sign has the given dev accounts sign s for domain d; the others leave
// their slot empty.
func (h *harness) sign(d Domain, s Settlement, signers ...int) [][]byte {
	h.t.Helper()
	sigs := make([][]byte, len(s.Payees))
	for _, i := range signers {
		idx := slices.Index(s.Payees, h.addr(i))
		if idx < 0 {
			h.t.Fatalf("signer %d is not a payee", i)
		}
		sig, err := SignSettlement(h.keys[i], d, s)
		if err != nil {
			h.t.Fatal(err)
		}
		sigs[idx] = sig
	}
	return sigs
}

// rawSettle sends settle without the client's own checks, so the contract
// is the one that refuses.
func (h *harness) rawSettle(i int, s Settlement, sigs [][]byte) (*types.Receipt, error) {
	c := h.clients[i]
	for j := range sigs {
		if sigs[j] == nil {
			sigs[j] = []byte{}
		}
	}
	culprits := s.Culprits
	if culprits == nil {
		culprits = []common.Address{}
	}
	return c.send(h.ctx, "settle", nil, c.bindings.PackSettle(s.JobID, s.Seed, s.ResultRoot, s.VerifierHash, s.Payees, s.Amounts, culprits, sigs), false)
}

// expectEvents checks the escrow events a receipt carries, in order.
func (h *harness) expectEvents(rcpt *types.Receipt, names ...string) {
	h.t.Helper()
	c := h.clients[0]
	var got []string
	for _, l := range rcpt.Logs {
		if l.Address != c.Address() || len(l.Topics) == 0 {
			continue
		}
		ev, err := c.abi.EventByID(l.Topics[0])
		if err != nil {
			h.t.Fatalf("unknown event %x", l.Topics[0])
		}
		got = append(got, ev.Name)
	}
	if !slices.Equal(got, names) {
		h.t.Fatalf("events %v, want %v", got, names)
	}
}

// expectRevert checks that err is a decoded revert matching want.
func expectRevert(t testing.TB, err error, want error, name string) {
	t.Helper()
	if !errors.Is(err, ErrReverted) || !errors.Is(err, want) {
		t.Fatalf("got %v, want revert %v", err, want)
	}
	var re *RevertError
	if !errors.As(err, &re) || re.Name != name {
		t.Fatalf("revert %v, want name %s", err, name)
	}
}

func (h *harness) jobState(jobID common.Hash) JobState {
	h.t.Helper()
	j, err := h.clients[0].Job(h.ctx, jobID)
	if err != nil {
		h.t.Fatal(err)
	}
	return j.State
}

// checkConservation proves no wei appeared or vanished: every account's
// balance plus the contracts' plus all fees paid equals the genesis funds;
// and the contract holds exactly its books: funded escrows, credits,
// stakes and burned stake.
func (h *harness) checkConservation() {
	t := h.t
	ctx := context.Background()
	c := h.clients[0]
	total := new(big.Int)
	var addrs []common.Address
	for i := range h.keys {
		addrs = append(addrs, h.addr(i))
	}
	for _, a := range addrs {
		total.Add(total, h.balanceCtx(ctx, a))
	}
	for _, a := range h.extra {
		total.Add(total, h.balanceCtx(ctx, a))
	}
	held := h.balanceCtx(ctx, c.Address())
	total.Add(total, held)
	total.Add(total, h.feesPaid(ctx))
	if total.Cmp(h.initial) != 0 {
		t.Errorf("value not conserved: balances+fees %v, genesis %v (diff %v)", total, h.initial, new(big.Int).Sub(total, h.initial))
	}

	books := new(big.Int)
	for _, id := range h.jobs {
		j, err := c.Job(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State == JobFunded {
			books.Add(books, j.Amount)
		}
	}
	for _, a := range append(addrs, h.extra...) {
		cr, err := c.CreditOf(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		st, err := c.StakeOf(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		books.Add(books, cr).Add(books, st.Active).Add(books, st.Pending)
	}
	burned, err := c.TotalBurned(ctx)
	if err != nil {
		t.Fatal(err)
	}
	books.Add(books, burned)
	if books.Cmp(held) != 0 {
		t.Errorf("contract holds %v but its books add up to %v", held, books)
	}
}

func (h *harness) balanceCtx(ctx context.Context, a common.Address) *big.Int {
	b, err := h.chain.sim.Client().BalanceAt(ctx, a, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

// feesPaid sums gas fees of every transaction on the chain (base fee burned
// plus tip to the zero-address coinbase, which is not a dev account).
func (h *harness) feesPaid(ctx context.Context) *big.Int {
	head, err := h.backend.HeaderByNumber(ctx, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	fees := new(big.Int)
	for n := uint64(1); n <= head.Number.Uint64(); n++ {
		blk, err := h.chain.sim.Client().BlockByNumber(ctx, new(big.Int).SetUint64(n))
		if err != nil {
			h.t.Fatal(err)
		}
		for _, tx := range blk.Transactions() {
			r, err := h.backend.TransactionReceipt(ctx, tx.Hash())
			if err != nil {
				h.t.Fatal(err)
			}
			fees.Add(fees, new(big.Int).Mul(new(big.Int).SetUint64(r.GasUsed), r.EffectiveGasPrice))
		}
	}
	return fees
}
