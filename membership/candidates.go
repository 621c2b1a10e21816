package membership

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// BoundFunc says which wallet peer is bound to (lower-case hex); ok is
// false when it has none that verifies.
type BoundFunc func(ctx context.Context, peer string) (wallet string, ok bool, err error)

// RerunCandidates lists the processors eligible to re-run a block of a
// job (finish.Records.Candidates) on a mesh with a chain: of the
// advertised processors, those whose bound wallet had staked the minimum
// by the block that created the job's escrow (Stakers.StakedBefore), each
// ranked by that wallet. Stake is what a place in a rerun order costs,
// and a key made after the job was announced could have been searched for
// a high rank. Every reader reads the same from the chain; a stake read
// now would differ between views (a wallet slashed since keeps its place,
// and its processors, unable to work, are asked dropped at once). The list
// is never nil: a reader with a chain always checks a request's order.
// Each candidate's Salt is the hash of the block that created the job's
// escrow (Stakers.CreatedIn), so that a creator cannot grind its job ID
// for orders that rank its partners first.
func RerunCandidates(bound BoundFunc, stakers *Stakers) finish.CandidateFunc {
	return func(ctx context.Context, info *jobs.JobInfo, procs []string) ([]finish.Candidate, error) {
		out := []finish.Candidate{}
		if info == nil {
			return out, nil
		}
		created, err := stakers.CreatedIn(ctx, info)
		if err != nil {
			return nil, fmt.Errorf("membership: re-run candidates of job %s: %w", info.ID(), err)
		}
		salt := created.Hex()
		for _, p := range procs {
			wallet, ok, err := bound(ctx, p)
			if err != nil {
				return nil, fmt.Errorf("membership: re-run candidates of job %s: %w", info.ID(), err)
			}
			if !ok {
				continue
			}
			staked, err := stakers.StakedBefore(ctx, info, common.HexToAddress(wallet))
			if err != nil {
				return nil, fmt.Errorf("membership: re-run candidates of job %s: %w", info.ID(), err)
			}
			if staked {
				out = append(out, finish.Candidate{Peer: p, Key: strings.ToLower(wallet), Salt: salt})
			}
		}
		return out, nil
	}
}

// StoreBindings reads a peer's bound wallet from the binding record store
// holds now (records.OpenWalletBinding), as KeepMembers does.
func StoreBindings(store crdt.Getter) BoundFunc {
	return func(ctx context.Context, peer string) (string, bool, error) {
		r, err := store.Get(ctx, records.WalletBindingKey(peer))
		if errors.Is(err, crdt.ErrNotFound) {
			return "", false, nil
		}
		if err != nil {
			return "", false, err
		}
		wb, err := records.OpenWalletBinding(r)
		if err != nil {
			return "", false, nil
		}
		return strings.ToLower(wb.Wallet), true, nil
	}
}

// ReaderRules are the judging rules of a reader of a mesh with a chain
// (finish.Rules): the disclosures its processors keep (KeepMembers) and
// the re-run candidates they rank (RerunCandidates), bindings read from
// store.
func ReaderRules(store crdt.Getter, members *Members, stakers *Stakers) finish.Rules {
	return finish.Rules{Keep: KeepMembers(store, members), Candidates: RerunCandidates(StoreBindings(store), stakers)}
}
