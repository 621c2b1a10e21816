package settlement

import (
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// Errors of on-chain settlement.
var (
	// ErrNotSettleable: the verdict cannot be paid (no credited result).
	ErrNotSettleable = errors.New("settlement: verdict cannot be settled")
	// ErrUnfunded: the job's escrow is not funded for its price.
	ErrUnfunded = errors.New("settlement: job escrow not funded")
)

// DeriveSettlement is the settlement a verified job's verdict implies. It
// is a pure function of its inputs, so every processor derives the same
// one from the same records and the mesh's dispatch config:
//
//   - payees: the wallets of the verdict's results whose processor is not
//     a culprit (credited results);
//   - weights: dispatch.SpeedFeeWeights: each credited result in MacroJob
//     m adds max(ts, dispatch.FeeFloor(cfg)) to its wallet's weight, ts
//     being its processor's task score in m from the verdict record's
//     rounds (0 when the record has none, which leaves the weights
//     proportional to the MicroJobs credited). A MacroJob whose
//     submitters all score in the round-score table is split exactly by
//     their task scores (the reference split); a result past the table
//     earns the floor, the table's last place;
//   - amounts: dispatch.SplitFee(price, weights), which pays out the price
//     exactly;
//   - culprits: culpritWallets, sorted, without duplicates and payees
//     (the contract slashes them and refuses a culprit that is paid);
//     the caller passes the bound wallets of the verdict's culprits that
//     are members of the job (the contract slashes no other);
//   - resultRoot: keccak256 of the output CID's binary form;
//   - verifierHash: records.OutcomeDigest of the verdict, the record's
//     rounds and the culprits, so that the quorum's signatures vouch for
//     the outcome summary that nodes outside the job read;
//   - seed: the job's seed, which the escrow's commitment binds.
func DeriveSettlement(cfg dispatch.Config, info *jobs.JobInfo, rec records.VerdictRecord, v microjob.Verdict, culpritWallets []string) (escrow.Settlement, error) {
	if !v.Verified {
		return escrow.Settlement{}, fmt.Errorf("%w: verdict not verified", ErrNotSettleable)
	}
	out, err := cid.Decode(rec.Output)
	if err != nil {
		return escrow.Settlement{}, fmt.Errorf("%w: output %q: %v", ErrNotSettleable, rec.Output, err)
	}
	if err := records.CheckRounds(rec.Rounds, v); err != nil {
		return escrow.Settlement{}, fmt.Errorf("%w: %w", ErrNotSettleable, err)
	}
	culprit := map[string]bool{}
	for _, c := range append(slices.Clone(rec.Culprits), v.Culprits...) {
		culprit[c] = true
	}
	credits := map[common.Address]int{}
	for _, r := range v.Results {
		if culprit[r.Processor] {
			continue
		}
		a, err := microjob.ParseWallet(r.Wallet)
		if err != nil {
			return escrow.Settlement{}, fmt.Errorf("%w: %w", ErrNotSettleable, err)
		}
		credits[a]++
	}
	if len(credits) == 0 {
		return escrow.Settlement{}, fmt.Errorf("%w: no credited result", ErrNotSettleable)
	}
	if len(credits) > escrow.MaxPayees {
		return escrow.Settlement{}, fmt.Errorf("%w: %d payees, limit %d", ErrNotSettleable, len(credits), escrow.MaxPayees)
	}
	payees := make([]common.Address, 0, len(credits))
	for a := range credits {
		payees = append(payees, a)
	}
	slices.SortFunc(payees, func(a, b common.Address) int { return a.Cmp(b) })
	weights, err := speedWeights(cfg, info.ID(), rec.Rounds, v, culprit, payees)
	if err != nil {
		return escrow.Settlement{}, fmt.Errorf("%w: %w", ErrNotSettleable, err)
	}
	amounts, err := dispatch.SplitFee(info.PriceWei, weights)
	if err != nil {
		return escrow.Settlement{}, fmt.Errorf("%w: %w", ErrNotSettleable, err)
	}
	payouts := make(map[common.Address]*big.Int, len(payees))
	for i, a := range payees {
		payouts[a] = amounts[i]
	}
	var culprits []common.Address
	for _, w := range culpritWallets {
		a, err := microjob.ParseWallet(w)
		if err != nil {
			continue
		}
		if _, paid := credits[a]; paid || slices.Contains(culprits, common.Address(a)) {
			continue
		}
		culprits = append(culprits, a)
	}
	if len(culprits) > escrow.MaxPayees {
		culprits = culprits[:escrow.MaxPayees]
	}
	s := escrow.NewSettlement(escrow.JobKey(common.Address(info.Creator), common.Hash(info.ID())), common.Hash(RevealedSeed(info, v)),
		records.ResultRoot(out), records.OutcomeDigest(v, rec), payouts, culprits)
	if err := s.Validate(); err != nil {
		return escrow.Settlement{}, fmt.Errorf("%w: %w", ErrNotSettleable, err)
	}
	return s, nil
}

// RevealedSeed is the seed a settlement of verdict v carries: the DApp's
// revealed secret when v's checks were drawn from it (the escrow checks it
// against the job's commitment), else zero: the DApp lapsed, or the job is
// checked by its replicas, and the escrow settles without a reveal.
func RevealedSeed(info *jobs.JobInfo, v microjob.Verdict) jobs.Seed {
	s, err := jobs.ParseHash(v.CheckSeed)
	if err != nil || jobs.CommitSeed(s) != info.SeedCommitment {
		return jobs.Seed{}
	}
	return s
}

// speedWeights are the fee weights of payees (ascending addresses): each
// credited result of the verdict paid by its wallet, with its processor's
// task score in the result's MacroJob from rounds.
func speedWeights(cfg dispatch.Config, id jobs.ID, rounds []records.RoundOrder, v microjob.Verdict, culprit map[string]bool, payees []common.Address) ([]uint64, error) {
	tasks := make([]dispatch.TaskOutcome, len(rounds))
	task := make(map[uint64]int, len(rounds))
	for i, r := range rounds {
		tasks[i] = finish.TaskOutcome(id, r)
		task[r.Macro] = i
	}
	payee := make(map[common.Address]int, len(payees))
	for i, a := range payees {
		payee[a] = i
	}
	var fc []dispatch.FeeCredit
	for _, r := range v.Results {
		if culprit[r.Processor] {
			continue
		}
		a, err := microjob.ParseWallet(r.Wallet)
		if err != nil {
			return nil, err
		}
		t, ok := task[r.Macro]
		if !ok {
			t = -1
		}
		fc = append(fc, dispatch.FeeCredit{Payee: payee[a], Task: t, Processor: r.Processor})
	}
	return dispatch.SpeedFeeWeights(cfg, len(payees), tasks, fc)
}
