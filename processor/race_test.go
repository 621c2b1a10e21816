package processor_test

import (
	"context"
	"fmt"
	"math/big"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	pebbleds "github.com/ipfs/go-ds-pebble"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/escrow/bindings"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/processor"
)

// rpcMesh is a mesh on 127.0.0.1 that settles on a dev chain served over
// JSON-RPC, every member with its own connection to it, as separate
// processes would have. Unlike the simulated backend, the dev chain takes
// concurrent transactions, so submitters can truly race.
type rpcMesh struct {
	chain    *escrow.DevChain
	eth      *ethclient.Client
	escrow   *escrow.Client // read-only
	members  []*rpcMember   // [0] is the bootstrap node, the last the client
	minStake *big.Int
}

type rpcMember struct {
	index  int
	role   node.Role
	wallet common.Address
	*node.Node
}

func (m *rpcMesh) processors() []*rpcMember {
	var out []*rpcMember
	for _, mem := range m.members {
		if mem.role == node.RoleProcessor {
			out = append(out, mem)
		}
	}
	return out
}

func (m *rpcMesh) client() *rpcMember { return m.members[len(m.members)-1] }

// newRPCMesh starts the dev chain with the escrow, a bootstrap node,
// processors funded by the dev chain's faucet and staked, and one client.
func newRPCMesh(t *testing.T, processors int, tune func(mem *rpcMember, pc *processor.Config)) *rpcMesh {
	t.Helper()
	ctx := context.Background()
	m, rc, deploy := startRPCChain(t, ctx)
	dir := t.TempDir()
	var bootstrap []string
	roles := []node.Role{node.RoleBootstrap}
	for range processors {
		roles = append(roles, node.RoleProcessor)
	}
	roles = append(roles, node.RoleClient)
	for i, role := range roles {
		mem := &rpcMember{index: i, role: role}
		n := m.startMember(t, ctx, rc, mem, filepath.Join(dir, fmt.Sprintf("%s-%d", role, i)), bootstrap, tune)
		mem.Node = n
		m.members = append(m.members, mem)
		if role == node.RoleBootstrap {
			for _, a := range n.Host.FullAddrs() {
				bootstrap = append(bootstrap, a.String())
			}
		}
		if role == node.RoleProcessor {
			if _, err := n.Escrow.Stake(ctx, deploy.MinStake); err != nil {
				t.Fatal(err)
			}
		}
	}
	return m
}

// startRPCChain starts the dev chain with the escrow deployed and returns
// a mesh with no members yet, read-only escrow client attached, and the
// faucet's RPC connection.
func startRPCChain(t *testing.T, ctx context.Context) (*rpcMesh, *rpc.Client, escrow.DeployParams) {
	t.Helper()
	dc := escrow.DefaultDevChainConfig()
	dc.Accounts = 2
	deploy := escrow.DefaultDeployParams()
	dc.Escrow = &deploy
	chain, err := escrow.StartDevChain(ctx, dc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chain.Close() })
	m := &rpcMesh{chain: chain, minStake: deploy.MinStake}
	rc, err := rpc.DialContext(ctx, chain.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	m.eth = ethclient.NewClient(rc)
	ecfg := escrow.DefaultConfig()
	ecfg.Contract = chain.Escrow()
	if m.escrow, err = escrow.New(ctx, m.eth, nil, ecfg); err != nil {
		t.Fatal(err)
	}
	return m, rc, deploy
}

// startMember initialises a repository for mem in repoDir and starts its
// node: a member other than the bootstrap node gets its wallet funded by
// the faucet and its own chain connection, a processor the test's short
// timings, adjusted by tune.
func (m *rpcMesh) startMember(t *testing.T, ctx context.Context, rc *rpc.Client, mem *rpcMember, repoDir string,
	bootstrap []string, tune func(mem *rpcMember, pc *processor.Config)) *node.Node {
	t.Helper()
	cfg := node.DefaultConfig()
	localmesh.FastStore(&cfg)
	cfg.Processor.AdvertiseEvery = node.Duration(time.Minute)
	cfg.Client.Quiet = node.Duration(2 * time.Second) // every processor joins within a second
	if err := node.InitRepo(repoDir, cfg); err != nil {
		t.Fatal(err)
	}
	repo, err := node.OpenRepo(repoDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	dstore, err := pebbleds.NewDatastore(filepath.Join(repoDir, node.DatastoreDir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dstore.Close() })
	pcfg := p2p.LoopbackConfig()
	pcfg.Bootstrap = bootstrap
	params := node.Params{
		Role: mem.role, Config: repo.Config, Identity: repo.Identity, Datastore: dstore,
		P2P: &pcfg, Logger: meshtest.Logger().With("node", mem.index),
	}
	if mem.role != node.RoleBootstrap {
		mem.wallet = common.HexToAddress(repo.Config.Processor.Wallet)
		if _, err := escrow.DevFund(ctx, rc, mem.wallet, big.NewInt(5e18)); err != nil {
			t.Fatal(err)
		}
		// Its own connection, as a separate process would have.
		own, err := ethclient.DialContext(ctx, m.chain.URL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(own.Close)
		params.Chain = &node.Chain{Backend: own, Contract: m.chain.Escrow()}
		params.WalletKey = repo.WalletKey
	}
	if mem.role == node.RoleProcessor {
		pc := repo.Config.ProcessorConfig()
		testTimeouts(&pc)
		pc.DiscloseGrace = 5 * time.Second
		pc.FundingBackoff = 200 * time.Millisecond
		if tune != nil {
			tune(mem, &pc)
		}
		params.Processor = &pc
	}
	n, err := node.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// TestRacingFinalizersSettleOnce: two processors submit settle for the
// same job at the same moment, each with its own connection to a chain
// that takes both transactions. Exactly one settles; the other sees the
// job closed on chain and stops without error; the payouts are credited
// once, and the escrow's value is conserved.
func TestRacingFinalizersSettleOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole job on a JSON-RPC dev chain in -short mode")
	}
	ready := make(chan int, 1)
	release := make(chan struct{})
	m := newRPCMesh(t, 3, func(mem *rpcMember, pc *processor.Config) {
		// Every would-be submitter holds back until the test lets go, so
		// the test can start the race itself.
		pc.BeforeSettle = func(jobs.ID, bool) bool {
			select {
			case ready <- mem.index:
			default:
			}
			select {
			case <-release:
				return true
			default:
				return false
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	contractBefore, err := m.eth.BalanceAt(ctx, m.chain.Escrow(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := new(big.Int).Mul(m.minStake, big.NewInt(3)); contractBefore.Cmp(want) != 0 {
		t.Fatalf("escrow holds %v before the job, the stakes are %v", contractBefore, want)
	}

	job := newMandelbrot(t, 192, 160, 32)
	spec := job.spec(3, 4)
	c := m.client()
	info, err := c.DApp.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID()
	var first int
	select {
	case first = <-ready:
	case <-ctx.Done():
		t.Fatal("no finalizer reached a quorum")
	}
	racers := m.racers(t, ctx, first, id)
	if settled := raceSettlements(t, ctx, racers, id); settled != 1 {
		t.Fatalf("%d racers settled, want exactly 1", settled)
	}
	// The other submitters now try too, and find the job settled.
	close(release)
	res, err := c.DApp.Wait(ctx, id, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	checkComplete(t, info, res)
	if res.Release == nil {
		t.Fatal("no release")
	}
	m.checkPaidOnce(t, ctx, info, res.Release, contractBefore)
	m.checkOneSettleSubmitted(t, ctx, id)
}

// racers returns two processors, the finalizer that got there first and
// another, once each of them sees every member's signature.
func (m *rpcMesh) racers(t *testing.T, ctx context.Context, first int, id jobs.ID) []*rpcMember {
	t.Helper()
	racers := []*rpcMember{m.members[first]}
	for _, mem := range m.processors() {
		if mem.index != first {
			racers = append(racers, mem)
			break
		}
	}
	for _, mem := range racers {
		if err := waitFor(ctx, func() bool {
			signed, members, _, err := mem.Worker.SettlementStatus(ctx, id)
			return err == nil && members > 0 && signed == members
		}); err != nil {
			t.Fatalf("processor %d never saw every signature", mem.index)
		}
	}
	return racers
}

// raceSettlements lets every racer submit the settlement at the same
// moment, fails the test on any error, and returns how many settled.
func raceSettlements(t *testing.T, ctx context.Context, racers []*rpcMember, id jobs.ID) int {
	t.Helper()
	type outcome struct {
		settled bool
		err     error
	}
	out := make([]outcome, len(racers))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, mem := range racers {
		wg.Go(func() {
			<-start
			ok, err := mem.Worker.SubmitSettlement(ctx, id)
			out[i] = outcome{ok, err}
		})
	}
	close(start)
	wg.Wait()
	settled := 0
	for i, o := range out {
		if o.err != nil {
			t.Fatalf("racer %d: %v", racers[i].index, o.err)
		}
		if o.settled {
			settled++
		}
	}
	return settled
}

// checkPaidOnce checks that the job was paid once: one EscrowReleased
// event, one successful settle transaction, each payee credited exactly
// its payout, the job settled on chain, and the escrow's value conserved.
func (m *rpcMesh) checkPaidOnce(t *testing.T, ctx context.Context, info *jobs.JobInfo, rel *escrow.Release, contractBefore *big.Int) {
	t.Helper()
	parsed, err := bindings.EscrowMetaData.ParseABI()
	if err != nil {
		t.Fatal(err)
	}
	logs, err := m.eth.FilterLogs(ctx, ethereum.FilterQuery{
		FromBlock: big.NewInt(0),
		Addresses: []common.Address{m.chain.Escrow()},
		Topics:    [][]common.Hash{{parsed.Events["EscrowReleased"].ID}, {escrow.JobKey(common.Address(info.Creator), common.Hash(info.ID()))}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 1 {
		t.Fatalf("%d EscrowReleased events, want 1", len(logs))
	}
	rcpt, err := m.eth.TransactionReceipt(ctx, rel.TxHash)
	if err != nil || rcpt.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("settle transaction %s: %v", rel.TxHash, err)
	}
	credits := m.checkPayeeCredits(t, ctx, rel)
	creatorCredit, err := m.escrow.CreditOf(ctx, common.Address(info.Creator))
	if err != nil {
		t.Fatal(err)
	}
	if creatorCredit.Cmp(rel.Refund) != 0 {
		t.Fatalf("creator credit %v, refund %v", creatorCredit, rel.Refund)
	}
	// Value conserved: payouts plus refund are the price, and the escrow
	// holds exactly the stakes plus the price it owes.
	if total := new(big.Int).Add(credits, creatorCredit); total.Cmp(info.PriceWei) != 0 {
		t.Fatalf("payouts %v + refund %v = %v, price %v", credits, creatorCredit, total, info.PriceWei)
	}
	contractAfter, err := m.eth.BalanceAt(ctx, m.chain.Escrow(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := new(big.Int).Add(contractBefore, info.PriceWei); contractAfter.Cmp(want) != 0 {
		t.Fatalf("escrow holds %v after settling, want stakes + price = %v", contractAfter, want)
	}
	j, err := m.escrow.Job(ctx, escrow.JobKey(common.Address(info.Creator), common.Hash(info.ID())))
	if err != nil {
		t.Fatal(err)
	}
	if j.State != escrow.JobSettled {
		t.Fatalf("job is %s on chain", j.State)
	}
}

// checkPayeeCredits checks that each payee is credited exactly its payout
// and returns the sum of the credits.
func (m *rpcMesh) checkPayeeCredits(t *testing.T, ctx context.Context, rel *escrow.Release) *big.Int {
	t.Helper()
	credits := new(big.Int)
	for i, p := range rel.Payees {
		credit, err := m.escrow.CreditOf(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if credit.Cmp(rel.Amounts[i]) != 0 {
			t.Fatalf("payee %s credit %v, payout %v", p, credit, rel.Amounts[i])
		}
		credits.Add(credits, credit)
	}
	return credits
}

// checkOneSettleSubmitted waits for every processor to stop: none fails,
// and across the mesh exactly one settle transaction counts as submitted.
func (m *rpcMesh) checkOneSettleSubmitted(t *testing.T, ctx context.Context, id jobs.ID) {
	t.Helper()
	for _, mem := range m.processors() {
		if err := waitFor(ctx, func() bool {
			_, _, done, err := mem.Worker.SettlementStatus(ctx, id)
			return err == nil && done
		}); err != nil {
			t.Fatalf("processor %d never saw the job settled", mem.index)
		}
	}
	var submitted, failed, lost float64
	for _, mem := range m.processors() {
		submitted += counterSum(t, mem.Metrics, "jobmesh_processor_settlements_total", "outcome", "submitted")
		failed += counterSum(t, mem.Metrics, "jobmesh_processor_settlements_total", "outcome", "failed")
		lost += counterSum(t, mem.Metrics, "jobmesh_processor_settlements_total", "outcome", "lost")
	}
	// The loser either saw the job closed before sending or had its
	// transaction revert; both are a clean stop.
	t.Logf("settle transactions that lost the race on chain: %v", lost)
	if submitted != 1 || failed != 0 {
		t.Fatalf("%v settle transactions submitted and %v failed, want 1 and 0", submitted, failed)
	}
}
