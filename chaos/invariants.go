package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/escrow/bindings"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/records"
)

// check returns the invariants job info broke, settled as res under
// faults f; before are the wallets' credits before the job.
func (r *run) check(ctx context.Context, info *jobs.JobInfo, res dapp.Result, f Faults, before map[common.Address]*big.Int) []string {
	var out []string
	for _, c := range []struct {
		name string
		err  error
	}{
		{"one verdict", r.oneVerdict(ctx, info, res)},
		{"every block processed", everyBlock(info, res)},
		{"no honest culprit", noHonestCulprit(r.indices(res.Culprits), f)},
		{"value conserved", r.valueConserved(ctx, info, res, before)},
		{"output fetchable", r.fetchable(ctx, info, res)},
	} {
		if c.err != nil {
			out = append(out, c.name+": "+c.err.Error())
		}
	}
	return out
}

// oneVerdict: the escrow was released once, on the verdict the client
// read, and every verified verdict record of the job names its output
// and culprits. A finalizer that wrote a verdict before a record that
// changed the judgement reached it withdraws its own once another that
// follows counts (finish.Superseded): the records are given twice the
// processing timeout to agree.
func (r *run) oneVerdict(ctx context.Context, info *jobs.JobInfo, res dapp.Result) error {
	n, err := r.releases(ctx, info)
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%d releases on chain", n)
	}
	if got := records.ResultRoot(res.Output); got != res.Release.ResultRoot {
		return fmt.Errorf("released result root %s, the verdict's output %s", res.Release.ResultRoot, res.Output)
	}
	if got := records.OutcomeDigest(res.Verdict, records.VerdictRecord{Culprits: res.Culprits, Rounds: res.Rounds}); got != res.Release.VerifierHash {
		return fmt.Errorf("released verifier hash %s, the verdict's %s", res.Release.VerifierHash, got)
	}
	return wait.For(2*r.cfg.ProcessingTimeout, func() error {
		recs, err := r.client().Store.Query(ctx, records.VerdictPrefix(info.ID()))
		if err != nil {
			return err
		}
		for _, rec := range recs {
			if rec.Tombstone {
				continue // withdrawn
			}
			vr, v, err := records.DecodeVerdictRecord(rec.Payload)
			if err != nil || !v.Verified {
				continue // a body record, or a verdict before a redo
			}
			if vr.Output != res.Output.String() || !slices.Equal(vr.Culprits, sorted(res.Culprits)) {
				return fmt.Errorf("verdict of %s names output %s and culprits %v; the settled one %s and %v",
					rec.Author, vr.Output, vr.Culprits, res.Output, res.Culprits)
			}

		}
		return nil
	})
}

// releases counts the job's EscrowReleased events.
func (r *run) releases(ctx context.Context, info *jobs.JobInfo) (int, error) {
	parsed, err := bindings.EscrowMetaData.ParseABI()
	if err != nil {
		return 0, err
	}
	logs, err := r.mesh.Chain.Client().FilterLogs(ctx, ethereum.FilterQuery{
		FromBlock: big.NewInt(0),
		Addresses: []common.Address{r.mesh.Escrow.Address()},
		Topics:    [][]common.Hash{{parsed.Events["EscrowReleased"].ID}, {escrow.JobKey(common.Address(info.Creator), common.Hash(info.ID()))}},
	})
	return len(logs), err
}

// everyBlock: the verdict is verified and complete, and every MicroJob
// of the checked plan has an accepted result.
func everyBlock(info *jobs.JobInfo, res dapp.Result) error {
	v := res.Verdict
	if !v.Verified || !v.Complete {
		return fmt.Errorf("verdict verified %v, complete %v (missing %d, redo %d, undecided %d)", v.Verified, v.Complete, len(v.Missing), len(v.Redo), len(v.Undecided))
	}
	seed, err := jobs.ParseHash(v.CheckSeed)
	if err != nil {
		return fmt.Errorf("check seed %q: %w", v.CheckSeed, err)
	}
	plan, err := jobs.SliceChecked(info, seed)
	if err != nil {
		return err
	}
	for _, mac := range plan.Macros {
		for _, mu := range mac.Micros {
			if _, ok := v.ResultCIDs[mu.ID.String()]; !ok {
				return fmt.Errorf("MicroJob %s (MacroJob %d) has no accepted result", mu.ID, mac.Index)
			}
		}
	}
	return nil
}

// noHonestCulprit: every culprit is one of the job's liars (-1 is a
// culprit that is no member at all).
func noHonestCulprit(culprits []int, f Faults) error {
	for _, i := range culprits {
		if !slices.Contains(f.Liars, i) {
			return fmt.Errorf("member %d named culprit, the liars are %v", i, f.Liars)
		}
	}
	return nil
}

// valueConserved: payouts and refund add up to the price, the release
// succeeded, each payee's credit grew by exactly its payout, no culprit
// is paid, and the escrow holds what it owes.
func (r *run) valueConserved(ctx context.Context, info *jobs.JobInfo, res dapp.Result, before map[common.Address]*big.Int) error {
	rel := res.Release
	total := new(big.Int).Set(rel.Refund)
	paid := map[common.Address]*big.Int{}
	for i, p := range rel.Payees {
		total.Add(total, rel.Amounts[i])
		if paid[p] == nil {
			paid[p] = new(big.Int)
		}
		paid[p].Add(paid[p], rel.Amounts[i])
	}
	if total.Cmp(info.PriceWei) != 0 {
		return fmt.Errorf("payouts + refund = %v, price %v", total, info.PriceWei)
	}
	rcpt, err := r.mesh.Chain.Client().TransactionReceipt(ctx, rel.TxHash)
	if err != nil {
		return err
	}
	if rcpt.Status != types.ReceiptStatusSuccessful {
		return fmt.Errorf("release transaction %s failed", rel.TxHash)
	}
	for _, i := range r.indices(res.Culprits) {
		if i >= 0 && paid[r.mesh.Members[i].Wallet] != nil {
			return fmt.Errorf("culprit %d is paid %v", i, paid[r.mesh.Members[i].Wallet])
		}
	}
	after, err := r.credits(ctx)
	if err != nil {
		return err
	}
	creator := common.Address(info.Creator)
	for w, a := range after {
		want := new(big.Int).Set(before[w])
		if p := paid[w]; p != nil {
			want.Add(want, p)
		}
		if w == creator {
			want.Add(want, rel.Refund)
		}
		if a.Cmp(want) != 0 {
			return fmt.Errorf("wallet %s credit %v, want %v", w, a, want)
		}
	}
	return r.books(ctx)
}

// books: the escrow holds exactly what it owes: the amount of every
// funded job of the run, every member's credit and stake, and the stake
// it burned.
func (r *run) books(ctx context.Context) error {
	esc := r.mesh.Escrow
	var accounts []common.Address
	for _, mem := range r.mesh.Members {
		if mem.Wallet != (common.Address{}) {
			accounts = append(accounts, mem.Wallet)
		}
	}
	owed, err := esc.Owed(ctx, r.keys, accounts)
	if err != nil {
		return err
	}
	bal, ok := r.mesh.Chain.Client().(interface {
		BalanceAt(context.Context, common.Address, *big.Int) (*big.Int, error)
	})
	if !ok {
		return errors.New("the chain's client reads no balance")
	}
	held, err := bal.BalanceAt(ctx, esc.Address(), nil)
	if err != nil {
		return err
	}
	if held.Cmp(owed) != 0 {
		return fmt.Errorf("the escrow holds %v but owes %v", held, owed)
	}
	return nil
}

// fetchable: a processor that does not hold the output (or else the
// client) fetches it by CID, and it equals the job run locally.
func (r *run) fetchable(ctx context.Context, info *jobs.JobInfo, res dapp.Result) error {
	holders, err := records.HoldersOf(ctx, r.client().Store, info.ID(), res.Output)
	if err != nil {
		return err
	}
	by := r.client()
	for _, mem := range r.mesh.Running() {
		if mem.Role == node.RoleProcessor && !slices.Contains(holders, mem.Host.ID()) {
			by = mem
			break
		}
	}
	dir, err := os.MkdirTemp(r.cfg.Dir, "output-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := by.IPFS.Get(ctx, res.Output, filepath.Join(dir, "out")); err != nil {
		return fmt.Errorf("member %d (connected to %d peers, %d of %d holders) fetching %s: %w",
			by.Index, len(by.Host.Network().Peers()), connectedTo(by, holders), len(holders), res.Output, err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "out", microjob.OutputFileName(info.Output.Kind)))
	if err != nil {
		return err
	}
	if !slices.Equal(got, r.job.want) {
		return errors.New("the fetched output differs from the job run locally")
	}
	return nil
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	if s == nil {
		s = []string{}
	}
	return s
}

// connectedTo counts the peers of ps that mem is connected to.
func connectedTo(mem *localmesh.Member, ps []peer.ID) int {
	n := 0
	for _, p := range ps {
		if mem.Host.Network().Connectedness(p) == network.Connected {
			n++
		}
	}
	return n
}

// liesAccepted counts the blocks whose accepted result is not the honest
// output: lies the checks did not catch. A lie a colluder's verifier run
// repeats, or one in a block no verifier drew, can pass by design (the
// detection odds are in package checksim), so this is a figure, not an
// invariant; and a picture does not show it (a PNG decoder ignores bytes
// after the image).
func (r *run) liesAccepted(info *jobs.JobInfo, res dapp.Result) int {
	seed, err := jobs.ParseHash(res.Verdict.CheckSeed)
	if err != nil {
		return 0
	}
	plan, err := jobs.SliceChecked(info, seed)
	if err != nil {
		return 0
	}
	n := 0
	for _, rs := range res.Verdict.Results {
		id, err := jobs.ParseHash(rs.MicroID)
		if err != nil || rs.Verifier || res.Verdict.ResultCIDs[rs.MicroID] != rs.ResultCID {
			continue
		}
		mu, err := plan.MicroJob(id)
		if err != nil {
			continue
		}
		for i, b := range mu.Blocks {
			if i < len(rs.Hashes) && b < uint64(len(r.job.hashes)) && rs.Hashes[i] != r.job.hashes[b] {
				n++
			}
		}
	}
	return n
}
