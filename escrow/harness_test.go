package escrow

import (
	"bytes"
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
	jobs    []common.Hash    // every job's key, for the contract's books
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

// looseTerms are the contract's loosest terms: no quiet period, one signer.
// Tests of other rules use them so that those rules alone decide.
var looseTerms = Terms{MinSigners: 1}

// createJob has client i fund a job with a fresh seed and loose terms; it
// returns the job's key and the seed.
func (h *harness) createJob(i int, price *big.Int, ttl time.Duration) (common.Hash, common.Hash) {
	h.t.Helper()
	return h.createJobWith(i, price, ttl, looseTerms)
}

// createJobWith is createJob with the given terms.
func (h *harness) createJobWith(i int, price *big.Int, ttl time.Duration, terms Terms) (common.Hash, common.Hash) {
	h.t.Helper()
	jobID := common.BytesToHash(crypto.Keccak256([]byte(h.t.Name()), big.NewInt(int64(len(h.jobs))).Bytes()))
	seed := crypto.Keccak256Hash(jobID[:], []byte("seed"))
	key := h.createJobID(i, jobID, SeedCommitment(seed), price, ttl, terms)
	return key, seed
}

// createJobID has client i create job jobID and returns its key.
func (h *harness) createJobID(i int, jobID, commitment common.Hash, price *big.Int, ttl time.Duration, terms Terms) common.Hash {
	h.t.Helper()
	rcpt, err := h.clients[i].CreateJob(h.ctx, jobID, commitment, h.headTime().Add(ttl), terms, price)
	if err != nil {
		h.t.Fatalf("createJob: %v", err)
	}
	h.expectEvents(rcpt, "JobCreated")
	key := h.clients[i].KeyOf(jobID)
	h.jobs = append(h.jobs, key)
	return key
}

func (h *harness) stake(i int, amount *big.Int) {
	h.t.Helper()
	rcpt, err := h.clients[i].Stake(h.ctx, amount)
	if err != nil {
		h.t.Fatalf("stake %d: %v", i, err)
	}
	h.expectEvents(rcpt, "Staked")
}

// join has the given accounts join job key.
func (h *harness) join(key common.Hash, accounts ...int) {
	h.t.Helper()
	for _, i := range accounts {
		rcpt, err := h.clients[i].Join(h.ctx, key)
		if err != nil {
			h.t.Fatalf("join %d: %v", i, err)
		}
		h.expectEvents(rcpt, "Joined")
	}
}

// settlement builds a settlement paying each of the given accounts amount.
func (h *harness) settlement(key, seed common.Hash, amount *big.Int, payees []int, culprits []int) Settlement {
	pay := map[common.Address]*big.Int{}
	for _, i := range payees {
		pay[h.addr(i)] = amount
	}
	var cs []common.Address
	for _, i := range culprits {
		cs = append(cs, h.addr(i))
	}
	return NewSettlement(key, seed, common.Hash{0xaa}, common.Hash{0xbb}, pay, cs)
}

// sign has the given dev accounts sign s for domain d, in signer order.
func (h *harness) sign(d Domain, s Settlement, signers ...int) []SignedBy {
	h.t.Helper()
	var out []SignedBy
	for _, i := range signers {
		sig, err := SignSettlement(h.keys[i], d, s)
		if err != nil {
			h.t.Fatal(err)
		}
		out = append(out, SignedBy{Signer: h.addr(i), Signature: sig})
	}
	slices.SortFunc(out, func(a, b SignedBy) int { return bytes.Compare(a.Signer[:], b.Signer[:]) })
	return out
}

// rawSettle sends settle without the client's own checks, the signers in
// the order given, so the contract is the one that refuses.
func (h *harness) rawSettle(i int, s Settlement, sigs []SignedBy) (*types.Receipt, error) {
	c := h.clients[i]
	signers := make([]common.Address, len(sigs))
	packed := make([][]byte, len(sigs))
	for j, sb := range sigs {
		signers[j], packed[j] = sb.Signer, sb.Signature
		if packed[j] == nil {
			packed[j] = []byte{}
		}
	}
	data := c.bindings.PackSettle(s.Key, s.Seed, s.ResultRoot, s.VerifierHash, s.Payees, s.Amounts, nonNil(s.Culprits), signers, packed)
	return c.send(h.ctx, "settle", nil, data, false)
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

// revertArg is argument i of the contract error err carries.
func revertArg(t testing.TB, err error, i int) any {
	t.Helper()
	var re *RevertError
	if !errors.As(err, &re) || len(re.Args) <= i {
		t.Fatalf("%v carries no argument %d", err, i)
	}
	return re.Args[i]
}

func (h *harness) jobState(key common.Hash) JobState {
	h.t.Helper()
	j, err := h.clients[0].Job(h.ctx, key)
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
