package settlement

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/membership"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// A failed job (finish.JobFailed) is refunded by a failure settlement,
// through the contract's settle as any other: seed and resultRoot zero,
// verifierHash the FailureDigest, one payee (the lowest member wallet
// among the reporters) paid 0, no culprits. The contract credits the rest,
// the whole amount, to the creator. A zero resultRoot is what tells a
// failure settlement from a verified one on chain (IsFailureRelease).

// FailureDigest is a failure settlement's verifierHash: keccak256 of the
// job ID (32 bytes), the MicroJob ID (32 bytes), the kind's text and the
// exit code (4 bytes big-endian).
func FailureDigest(id, micro jobs.ID, f records.Failure) common.Hash {
	var buf []byte
	buf = append(buf, id[:]...)
	buf = append(buf, micro[:]...)
	buf = append(buf, f.Kind...)
	buf = binary.BigEndian.AppendUint32(buf, f.ExitCode)
	return crypto.Keccak256Hash(buf)
}

// FailureSettlement is the failure settlement of job id, escrow key key,
// failed as fj, paying payee nothing.
func FailureSettlement(key common.Hash, id jobs.ID, fj finish.FailedJob, payee common.Address) escrow.Settlement {
	return escrow.Settlement{
		Key: key, VerifierHash: FailureDigest(id, fj.Micro, fj.Failure),
		Payees: []common.Address{payee}, Amounts: []*big.Int{new(big.Int)},
	}
}

// IsFailureRelease reports whether a settled job's release is a failure
// settlement's: its resultRoot is zero.
func IsFailureRelease(r *escrow.Release) bool { return r != nil && r.ResultRoot == (common.Hash{}) }

// failureView is view for a failed job: the settlement derived from the
// failure, not from a verdict.
func (s *Settler) failureView(ctx context.Context, j Job, recs *finish.Records) (view, error) {
	var cv view
	key := membership.EscrowKey(j.Info)
	wallets, err := s.p.Members.Wallets(ctx, j.ID, key, s.p.Wallets.CulpritWallets(j.Failed.Reporters), "payee")
	if err != nil {
		return cv, err
	}
	var payee common.Address
	for i, w := range wallets {
		a, err := microjob.ParseWallet(w)
		if err != nil {
			return cv, fmt.Errorf("settlement: reporter wallet %q: %w", w, err)
		}
		if i == 0 || bytes.Compare(a[:], payee[:]) < 0 {
			payee = a
		}
	}
	if len(wallets) == 0 {
		return cv, fmt.Errorf("%w: job %s: no reporter of its failure is a member", ErrNonMemberPayee, j.ID)
	}
	cv.own = FailureSettlement(key, j.ID, *j.Failed, payee)
	return cv, s.addSignatures(ctx, j, key, recs, &cv)
}
