package escrow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jobmesh/jobmesh/escrow/bindings"
)

func TestNewRefusesWrongChainAndMissingContract(t *testing.T) {
	h := newHarness(t, 1)
	cfg := testConfig()
	cfg.Contract = h.clients[0].Address()
	cfg.ChainID = big.NewInt(137)
	if _, err := New(h.ctx, h.backend, nil, cfg); !errors.Is(err, ErrWrongChain) {
		t.Fatalf("wrong chain: %v", err)
	}
	cfg.ChainID = nil
	cfg.Contract = common.Address{0x42}
	if _, err := New(h.ctx, h.backend, nil, cfg); !errors.Is(err, ErrNoContract) {
		t.Fatalf("no contract: %v", err)
	}
	cfg.Contract = common.Address{}
	if _, err := New(h.ctx, h.backend, nil, cfg); !errors.Is(err, ErrBadConfig) {
		t.Fatalf("no address: %v", err)
	}
	// A read-only client reads but does not send.
	cfg.Contract = h.clients[0].Address()
	ro, err := New(h.ctx, h.backend, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ro.MinStake(h.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ro.Withdraw(h.ctx); !errors.Is(err, ErrNoSigner) {
		t.Fatalf("read-only send: %v", err)
	}
}

func TestInsufficientFunds(t *testing.T) {
	h := newHarness(t, 2)
	pauper, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.Contract = h.clients[0].Address()
	c, err := New(h.ctx, h.backend, bind.NewKeyedTransactor(pauper, big.NewInt(DevChainID)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	deadline := h.headTime().Add(time.Hour)
	if _, err := c.CreateJob(h.ctx, common.Hash{1}, common.Hash{2}, deadline, looseTerms, big.NewInt(1)); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("unfunded sender: %v", err)
	}
	// A funded sender asking for more than it has.
	tooMuch := new(big.Int).Add(h.balance(h.addr(1)), big.NewInt(1))
	if _, err := h.clients[1].Stake(h.ctx, tooMuch); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("over balance: %v", err)
	}
}

func TestUnreachableChain(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	ec, err := ethclient.DialContext(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close()
	cfg := testConfig()
	cfg.Contract = common.Address{1}
	reg := prometheus.NewRegistry()
	cfg.Registerer = reg
	_, err = New(t.Context(), ec, nil, cfg)
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("got %v, want ErrUnreachable", err)
	}
	c, _ := newMetrics(reg)
	if got := testutil.ToFloat64(c.retries); got != float64(cfg.Retry.Attempts-1) {
		t.Fatalf("retries counted %v, want %d", got, cfg.Retry.Attempts-1)
	}
}

func newKeystoreWallet(t *testing.T, i int) Wallet {
	t.Helper()
	ks := keystore.NewKeyStore(t.TempDir(), keystore.LightScryptN, keystore.LightScryptP)
	acct, err := ks.ImportECDSA(DevKey(i), "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	return Wallet{KeyStore: ks, Account: acct, Passphrase: "correct horse"}
}

// TestDevChainSharedOverRPC runs the whole flow against the dev chain over
// HTTP JSON-RPC, each party with its own connection, as separate processes
// would: a deployer, a DApp, processors signing with keystore wallets.
func TestDevChainSharedOverRPC(t *testing.T) {
	ctx := t.Context()
	dc := DefaultDevChainConfig()
	dc.Accounts = 4
	params := DefaultDeployParams()
	params.MinStake = big.NewInt(1000)
	dc.Escrow = &params
	chain, err := StartDevChain(ctx, dc)
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	if _, err := StartDevChain(ctx, DevChainConfig{Addr: "10.0.0.1:0", Accounts: 1, Balance: big.NewInt(1), Logger: dc.Logger}); !errors.Is(err, ErrBadConfig) {
		t.Fatalf("non-loopback address: %v", err)
	}

	deployerRPC, err := ethclient.DialContext(ctx, chain.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer deployerRPC.Close()
	// The escrow is dev account 0's first contract, at a fixed address.
	if want := crypto.CreateAddress(crypto.PubkeyToAddress(chain.Keys()[0].PublicKey), 0); chain.Escrow() != want {
		t.Fatalf("dev escrow at %s, want %s", chain.Escrow(), want)
	}
	cfg := testConfig()
	cfg.Contract = chain.Escrow()
	cfg.ChainID = big.NewInt(DevChainID)

	dapp, err := Dial(ctx, chain.URL(), newKeystoreWallet(t, 0), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer dapp.Close()
	wallets := []Wallet{newKeystoreWallet(t, 1), newKeystoreWallet(t, 2), newKeystoreWallet(t, 3)}
	procs := dialStaked(ctx, t, chain.URL(), wallets, cfg)
	st, err := dapp.StakeOf(ctx, wallets[0].Account.Address)
	if err != nil || st.Active.Int64() != 5000 {
		t.Fatalf("stake read back %+v, %v", st, err)
	}

	seed := common.Hash{0x5e}
	jobID := common.Hash{0x10}
	hd, err := deployerRPC.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dapp.CreateJob(ctx, jobID, SeedCommitment(seed), time.Unix(int64(hd.Time), 0).Add(time.Hour), looseTerms, big.NewInt(900)); err != nil {
		t.Fatalf("create: %v", err)
	}
	key := dapp.KeyOf(jobID)
	for _, p := range procs {
		if _, err := p.Join(ctx, key); err != nil {
			t.Fatalf("join: %v", err)
		}
	}

	released := make(chan *Release, 1)
	waitErr := make(chan error, 1)
	go func() {
		r, err := dapp.WaitReleased(ctx, key)
		released <- r
		waitErr <- err
	}()

	pay := map[common.Address]*big.Int{}
	for _, w := range wallets {
		pay[w.Account.Address] = big.NewInt(300)
	}
	s := NewSettlement(key, seed, common.Hash{0xa}, common.Hash{0xb}, pay, nil)
	sigs := signedBy(t, procs[0].Domain(), s, wallets[:2])
	if _, err := procs[2].Settle(ctx, s, sigs); err != nil {
		t.Fatalf("settle: %v", err)
	}
	r := <-released
	if err := <-waitErr; err != nil {
		t.Fatalf("wait released: %v", err)
	}
	if len(r.Payees) != 3 || r.Refund.Sign() != 0 {
		t.Fatalf("release %+v", r)
	}
	for i := range r.Payees {
		if r.Payees[i] != s.Payees[i] || r.Amounts[i].Int64() != 300 {
			t.Fatalf("payout %d: %s %v", i, r.Payees[i], r.Amounts[i])
		}
	}
}

// dialStaked dials the chain at url once per wallet, stakes 5000 wei
// from each, and closes the clients when the test ends.
func dialStaked(ctx context.Context, t *testing.T, url string, wallets []Wallet, cfg Config) []*Client {
	t.Helper()
	var procs []*Client
	for _, w := range wallets {
		p, err := Dial(ctx, url, w, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		if _, err := p.Stake(ctx, big.NewInt(5000)); err != nil {
			t.Fatalf("stake: %v", err)
		}
		procs = append(procs, p)
	}
	return procs
}

// signedBy is settlement s signed by each wallet under domain d.
func signedBy(t *testing.T, d Domain, s Settlement, wallets []Wallet) []SignedBy {
	t.Helper()
	var sigs []SignedBy
	for _, w := range wallets {
		sig, err := w.SignSettlement(d, s)
		if err != nil {
			t.Fatal(err)
		}
		sigs = append(sigs, SignedBy{Signer: w.Account.Address, Signature: sig})
	}
	return sigs
}

// flakyProxy stands between a client and the dev chain: it cuts the first
// `refuse` connections without an answer, and forwards the first `drop`
// eth_sendRawTransaction calls but cuts the connection before the answer
// returns, as a network that fails at the worst moment would.
type flakyProxy struct {
	upstream string
	refuse   atomic.Int32
	drop     atomic.Int32
	sends    atomic.Int32
}

func (p *flakyProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if p.refuse.Add(-1) >= 0 {
		hangUp(w)
		return
	}
	var req struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &req)
	resp, err := http.Post(p.upstream, "application/json", bytes.NewReader(body))
	if err != nil {
		hangUp(w)
		return
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if req.Method == "eth_sendRawTransaction" {
		p.sends.Add(1)
		if p.drop.Add(-1) >= 0 {
			hangUp(w)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

func hangUp(w http.ResponseWriter) {
	if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
		conn.Close()
	}
}

// TestRetryLosesNothing: the chain drops out, and a sent transaction's
// answer is lost; the client retries the same signed transaction, which
// lands exactly once.
func TestRetryLosesNothing(t *testing.T) {
	ctx := t.Context()
	dc := DefaultDevChainConfig()
	dc.Accounts = 2
	chain, err := StartDevChain(ctx, dc)
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	direct, err := ethclient.DialContext(ctx, chain.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	deployer, _, err := Deploy(ctx, direct, bind.NewKeyedTransactor(chain.Keys()[0], big.NewInt(DevChainID)), DefaultDeployParams(), testConfig())
	if err != nil {
		t.Fatal(err)
	}

	proxy := &flakyProxy{upstream: chain.URL()}
	srv := httptest.NewServer(proxy)
	defer srv.Close()
	wallet := newKeystoreWallet(t, 1)
	cfg := testConfig()
	cfg.Contract = deployer.Address()
	reg := prometheus.NewRegistry()
	cfg.Registerer = reg
	proxy.refuse.Store(2) // New's first requests fail
	c, err := Dial(ctx, srv.URL, wallet, cfg)
	if err != nil {
		t.Fatalf("dial through flaky proxy: %v", err)
	}
	defer c.Close()

	from := wallet.Account.Address
	before, err := direct.BalanceAt(ctx, from, nil)
	if err != nil {
		t.Fatal(err)
	}
	proxy.drop.Store(1) // the first send reaches the chain; its answer does not come back
	hd, err := direct.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	price := big.NewInt(1_000_000)
	rcpt, err := c.CreateJob(ctx, common.Hash{0x77}, common.Hash{1}, time.Unix(int64(hd.Time), 0).Add(time.Hour), looseTerms, price)
	if err != nil {
		t.Fatalf("create through flaky proxy: %v", err)
	}
	if proxy.sends.Load() < 2 {
		t.Fatalf("the send was not retried (%d sends)", proxy.sends.Load())
	}
	nonce, err := direct.NonceAt(ctx, from, nil)
	if err != nil {
		t.Fatal(err)
	}
	if nonce != 1 {
		t.Fatalf("sender nonce %d: the job was sent %d times", nonce, nonce)
	}
	after, err := direct.BalanceAt(ctx, from, nil)
	if err != nil {
		t.Fatal(err)
	}
	fee := new(big.Int).Mul(new(big.Int).SetUint64(rcpt.GasUsed), rcpt.EffectiveGasPrice)
	if want := new(big.Int).Sub(before, new(big.Int).Add(price, fee)); after.Cmp(want) != 0 {
		t.Fatalf("balance %v, want %v", after, want)
	}
	j, err := c.Job(ctx, c.KeyOf(common.Hash{0x77}))
	if err != nil || j.State != JobFunded || j.Amount.Cmp(price) != 0 {
		t.Fatalf("job %+v, %v", j, err)
	}
	m, _ := newMetrics(reg)
	if testutil.ToFloat64(m.retries) < 3 {
		t.Fatalf("retries counted %v", testutil.ToFloat64(m.retries))
	}
	if got := testutil.ToFloat64(m.txs.WithLabelValues("createJob", "ok")); got != 1 {
		t.Fatalf("createJob ok counted %v", got)
	}
}

func TestRevertErrorDecoding(t *testing.T) {
	parsed, err := bindings.EscrowMetaData.ParseABI()
	if err != nil {
		t.Fatal(err)
	}
	id := parsed.Errors["StakeLocked"].ID
	data := append(bytes.Clone(id[:4]), common.LeftPadBytes(big.NewInt(42).Bytes(), 32)...)
	re := decodeRevert(parsed, data)
	if re.Name != "StakeLocked" || len(re.Args) != 1 || re.Args[0].(uint64) != 42 {
		t.Fatalf("decoded %+v", re)
	}
	if !errors.Is(re, ErrStakeLocked) || !errors.Is(re, ErrReverted) || errors.Is(re, ErrBadSeed) {
		t.Fatal("sentinel matching wrong")
	}
	unknown := decodeRevert(parsed, []byte{1, 2, 3, 4})
	if unknown.Name != "" || !errors.Is(unknown, ErrReverted) {
		t.Fatalf("unknown selector %+v", unknown)
	}
	if transient(context.Canceled) || !transient(io.ErrUnexpectedEOF) {
		t.Fatal("transient classification wrong")
	}
}

// TestMinedRevertIsDecoded: with a fixed gas limit nothing is estimated, so
// a refused call is mined and fails; the client replays it to name why.
func TestMinedRevertIsDecoded(t *testing.T) {
	h := newHarness(t, 2)
	jobID, _ := h.createJob(creator, ether(1), time.Hour)
	auth := h.chain.Transactor(1)
	auth.GasLimit = 200_000
	cfg := testConfig()
	cfg.Contract = h.clients[0].Address()
	c, err := New(h.ctx, h.backend, auth, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rcpt, err := c.Refund(h.ctx, jobID)
	expectRevert(t, err, ErrDeadlineNotReached, "DeadlineNotReached")
	if rcpt == nil || rcpt.Status != 0 {
		t.Fatalf("want the failed receipt, got %+v", rcpt)
	}
	if st := h.jobState(jobID); st != JobFunded {
		t.Fatalf("job %v after a failed refund", st)
	}
}
