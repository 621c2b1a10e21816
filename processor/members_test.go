package processor_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/escrow/bindings"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// termsMesh is chainMesh with flowMesh's grace periods and the jobs'
// escrow terms set.
func termsMesh(t *testing.T, processors int, terms escrow.Terms, tune func(m *localmesh.Member, pc *processor.Config)) *localmesh.Mesh {
	t.Helper()
	return meshtest.New(t, localmesh.Options{
		Processors: processors,
		Clients:    1,
		Chain:      &localmesh.ChainOptions{Terms: terms},
		Processor: func(m *localmesh.Member, pc *processor.Config) {
			testTimeouts(pc)
			pc.DiscloseGrace = 5 * time.Second
			pc.RerunTimeout = 5 * time.Second
			pc.FundingBackoff = 200 * time.Millisecond
			if tune != nil {
				tune(m, pc)
			}
		},
	})
}

// waitBound waits until every processor's store holds every processor's
// wallet binding: a disclosure whose binding a processor has not seen yet
// is left out of its judging, which delays a job submitted at once.
func waitBound(t *testing.T, m *localmesh.Mesh) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	procs := processorsOf(m)
	for _, mem := range procs {
		for _, other := range procs {
			if err := waitFor(ctx, func() bool {
				_, err := mem.Store.Get(ctx, records.WalletBindingKey(other.Host.ID().String()))
				return err == nil
			}); err != nil {
				t.Fatalf("processor %d never saw processor %d's wallet binding", mem.Index, other.Index)
			}
		}
	}
}

// settleSigners are the signers the job's settle transaction names.
func settleSigners(t *testing.T, m *localmesh.Mesh, tx common.Hash) []common.Address {
	t.Helper()
	parsed, err := bindings.EscrowMetaData.ParseABI()
	if err != nil {
		t.Fatal(err)
	}
	txn, _, err := m.Chain.Client().TransactionByHash(context.Background(), tx)
	if err != nil {
		t.Fatal(err)
	}
	method, err := parsed.MethodById(txn.Data()[:4])
	if err != nil || method.Name != "settle" {
		t.Fatalf("transaction %s calls %v (%v), not settle", tx, method, err)
	}
	args, err := method.Inputs.Unpack(txn.Data()[4:])
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range method.Inputs {
		if in.Name == "signers" {
			return args[i].([]common.Address)
		}
	}
	t.Fatal("settle has no signers argument")
	return nil
}

func jobKey(info *jobs.JobInfo) common.Hash {
	return escrow.JobKey(common.Address(info.Creator), common.Hash(info.ID()))
}

// TestMemberWithoutWorkSigns: a processor joins the job's escrow but does
// no MicroJob (every one it takes is held until the test ends), so it is
// a member and no payee. It recomputes the verdict and signs the same
// settlement as the payees, and the settle transaction carries the
// quorum of the members, as the contract counts it, not of the payees.
func TestMemberWithoutWorkSigns(t *testing.T) {
	const idle = 4
	var m *localmesh.Mesh
	m = termsMesh(t, 4, localmesh.DefaultTerms(), func(mem *localmesh.Member, pc *processor.Config) {
		if mem.Index == idle {
			pc.Hold = func(ctx context.Context, _, _ jobs.ID) { <-ctx.Done() }
		}
		// A quorum is 3 of the 4 members: the payees alone could settle
		// before the member without work has judged the job.
		pc.BeforeSettle = func(id jobs.ID, _ bool) bool {
			_, err := mem.Store.Get(context.Background(), records.SignatureKey(id, m.Members[idle].Host.ID().String()))
			return err == nil
		}
	})
	waitBound(t, m)
	job := newMandelbrot(t, 192, 160, 32)
	info, res := runJob(t, m, job.spec(3, 4), 4*time.Minute)
	checkComplete(t, info, res)
	checkRelease(t, m, info, res)
	ctx := context.Background()
	wallet := m.Members[idle].Wallet
	if slices.Contains(res.Release.Payees, wallet) {
		t.Fatalf("the processor without work is paid: payees %v", res.Release.Payees)
	}
	j, err := m.Escrow.Job(ctx, jobKey(info))
	if err != nil {
		t.Fatal(err)
	}
	if member, err := m.Escrow.IsMember(ctx, jobKey(info), wallet); err != nil || !member || j.Members != 4 {
		t.Fatalf("the processor without work: member %v (%v); the job has %d members, want all 4", member, err, j.Members)
	}
	rec, err := client(m).Store.Get(ctx, records.SignatureKey(info.ID(), m.Members[idle].Host.ID().String()))
	if err != nil {
		t.Fatalf("no signature of the member without work: %v", err)
	}
	sig, err := records.DecodeSignatureRecord(rec.Payload)
	if err != nil || sig.Signer != wallet || sig.Settlement.ResultRoot != res.Release.ResultRoot {
		t.Fatalf("its signature record: signer %s, %v", sig.Signer, err)
	}
	// The quorum is counted over the 4 members: 3 signatures at least. Over
	// the 3 payees, 2 would have done. Which 3 of the 4 signatures reach
	// the transaction depends on who signed first.
	signers := settleSigners(t, m, res.Release.TxHash)
	if 3*len(signers) < 2*j.Members {
		t.Fatalf("settle signed by %d of %d members: %v", len(signers), j.Members, signers)
	}
	for _, s := range signers {
		if member, err := m.Escrow.IsMember(ctx, jobKey(info), s); err != nil || !member {
			t.Fatalf("settle signer %s is not a member (%v)", s, err)
		}
	}
}

// TestOutsiderIsNotPaid: a staked processor that never joins the job's
// escrow works on it anyway and writes valid results. The members leave
// its results out of judging (counted) and redo its MicroJobs, so it is
// neither paid nor named: a settlement naming it would revert, and the
// job settles. The members hold the MicroJobs they lock until the
// outsider has locked one, so that it has work for sure.
func TestOutsiderIsNotPaid(t *testing.T) {
	const outsider = 3
	worked := make(chan struct{})
	outsiderLocked := sync.OnceFunc(func() { close(worked) })
	m := termsMesh(t, 4, localmesh.DefaultTerms(), func(mem *localmesh.Member, pc *processor.Config) {
		pc.DiscloseGrace = time.Second
		pc.SkipJoin = mem.Index == outsider
		if pc.SkipJoin {
			pc.Hold = func(context.Context, jobs.ID, jobs.ID) { outsiderLocked() }
		} else {
			pc.Hold = holdUntil(worked, nil)
		}
	})
	ctx := context.Background()
	wallet := m.Members[outsider].Wallet
	stake, err := m.Escrow.StakeOf(ctx, wallet)
	if err != nil || stake.Active.Sign() == 0 {
		t.Fatalf("the outsider is not staked: %+v (%v)", stake, err)
	}
	waitBound(t, m)
	job := newMandelbrot(t, 192, 160, 32)
	info, res := runJob(t, m, job.spec(3, 4), 4*time.Minute)
	checkComplete(t, info, res)
	checkRelease(t, m, info, res)
	if member, err := m.Escrow.IsMember(ctx, jobKey(info), wallet); err != nil || member {
		t.Fatalf("the outsider is a member (%v)", err)
	}
	// It did work on the job: its disclosures are in the store.
	peer := m.Members[outsider].Host.ID().String()
	recs, err := client(m).Store.Query(ctx, records.JobKey(info.ID())+"/")
	if err != nil {
		t.Fatal(err)
	}
	disclosed := 0
	for _, r := range recs {
		if r.Type == records.ResultType && r.Author.String() == peer {
			disclosed++
		}
	}
	if disclosed == 0 {
		t.Fatal("the outsider disclosed no result: nothing was tried")
	}
	for _, r := range res.Verdict.Results {
		if r.Processor == peer {
			t.Fatalf("the verdict credits the outsider: %+v", r)
		}
	}
	if slices.Contains(res.Release.Payees, wallet) || slices.Contains(res.Culprits, peer) {
		t.Fatalf("the outsider is paid or named: payees %v, culprits %v", res.Release.Payees, res.Culprits)
	}
	if credit, err := m.Escrow.CreditOf(ctx, wallet); err != nil || credit.Sign() != 0 {
		t.Fatalf("the outsider has credit %v (%v)", credit, err)
	}
	if after, err := m.Escrow.StakeOf(ctx, wallet); err != nil || after.Active.Cmp(stake.Active) != 0 {
		t.Fatalf("the outsider's stake went from %v to %+v (%v)", stake.Active, after, err)
	}
	var left float64
	for _, mem := range processorsOf(m) {
		if mem.Index != outsider {
			left += counterSum(t, mem.Metrics, "jobmesh_processor_non_members_total", "record", "disclosure")
		}
	}
	if left == 0 {
		t.Fatal("no member counted a disclosure left out")
	}
	t.Logf("the outsider disclosed %d results; members left out %v of them", disclosed, left)
}

// TestRefusedJoinKeepsProcessorOffTheJob: a processor whose stake is
// cooling down (unstake requested) cannot join; the escrow's refusal is
// counted once, and it neither joins a room nor commits, while the
// others settle the job.
func TestRefusedJoinKeepsProcessorOffTheJob(t *testing.T) {
	const unstaked = 3
	m := termsMesh(t, 3, localmesh.DefaultTerms(), nil)
	ctx := context.Background()
	mem := m.Members[unstaked]
	stake, err := mem.Escrow.StakeOf(ctx, mem.Wallet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Escrow.RequestUnstake(ctx, stake.Active); err != nil {
		t.Fatal(err)
	}
	waitBound(t, m)
	job := newMandelbrot(t, 192, 160, 32)
	info, res := runJob(t, m, job.spec(3, 4), 4*time.Minute)
	checkComplete(t, info, res)
	checkRelease(t, m, info, res)
	if n := counterSum(t, mem.Metrics, "jobmesh_processor_join_refusals_total", "reason", "stake"); n != 1 {
		t.Fatalf("%v join refusals counted, want 1", n)
	}
	if n := counterSum(t, mem.Metrics, "jobmesh_processor_microjobs_total"); n != 0 {
		t.Fatalf("the processor that could not join ran %v MicroJobs", n)
	}
	peer := mem.Host.ID().String()
	recs, err := client(m).Store.Query(ctx, records.JobKey(info.ID())+"/")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Author.String() == peer && (r.Type == records.CommitType || r.Type == records.ResultType) {
			t.Fatalf("the processor that could not join wrote %s", r.Key)
		}
	}
	if member, err := m.Escrow.IsMember(ctx, jobKey(info), mem.Wallet); err != nil || member {
		t.Fatalf("it is a member (%v)", err)
	}
}

// TestSettleWaitsOutTheQuietPeriod: the job is signed long before its
// quiet period after the last join is over. No processor tries to settle
// before the chain's clock passes it (a settle would revert TooEarly), none
// counts a failure, and the job settles once it is over.
func TestSettleWaitsOutTheQuietPeriod(t *testing.T) {
	terms := escrow.Terms{Quiet: 40 * time.Second, MinSigners: 2}
	var (
		m     *localmesh.Mesh
		mu    sync.Mutex
		tried []time.Time // chain time of each processor's first attempt
	)
	m = termsMesh(t, 3, terms, func(mem *localmesh.Member, pc *processor.Config) {
		first := true
		pc.BeforeSettle = func(jobs.ID, bool) bool {
			if first {
				first = false
				if h, err := m.Chain.Client().HeaderByNumber(context.Background(), nil); err == nil {
					mu.Lock()
					tried = append(tried, time.Unix(int64(h.Time), 0))
					mu.Unlock()
				}
			}
			return true
		}
	})
	waitBound(t, m)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	job := newMandelbrot(t, 128, 96, 32)
	c := client(m)
	info, err := c.DApp.Submit(ctx, job.spec(3, 4))
	if err != nil {
		t.Fatal(err)
	}
	// The chain's clock when a quorum (2 of 3 members) has signed.
	var signedAt time.Time
	if err := waitFor(ctx, func() bool {
		recs, err := c.Store.Query(ctx, records.JobKey(info.ID())+"/signature/")
		if err != nil || len(recs) < 2 {
			return false
		}
		h, err := m.Chain.Client().HeaderByNumber(ctx, nil)
		signedAt = time.Unix(int64(h.Time), 0)
		return err == nil
	}); err != nil {
		t.Fatal("the job was never signed")
	}
	res, err := c.DApp.Wait(ctx, info.ID(), 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	checkComplete(t, info, res)
	checkRelease(t, m, info, res)
	j, err := m.Escrow.Job(ctx, jobKey(info))
	if err != nil {
		t.Fatal(err)
	}
	opens := j.SettleOpensAt()
	if !signedAt.Before(opens) {
		t.Fatalf("signed at chain time %v, after settling opened at %v: the wait was not tested", signedAt, opens)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tried) == 0 {
		t.Fatal("no processor tried to settle")
	}
	for _, at := range tried {
		if at.Before(opens) {
			t.Fatalf("a processor tried to settle at chain time %v, before the quiet period ended at %v", at, opens)
		}
	}
	for _, mem := range processorsOf(m) {
		for _, outcome := range []string{"failed", "early"} {
			if n := counterSum(t, mem.Metrics, "jobmesh_processor_settlements_total", "outcome", outcome); n != 0 {
				t.Fatalf("processor %d: %v settlements %s", mem.Index, n, outcome)
			}
		}
		if n := counterSum(t, mem.Metrics, "jobmesh_escrow_transactions_total", "method", "settle", "outcome", "reverted"); n != 0 {
			t.Fatalf("processor %d: %v settle transactions reverted", mem.Index, n)
		}
	}
	t.Logf("signed at %v, settling opened at %v, first tried at %v", signedAt, opens, tried)
}
