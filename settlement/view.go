package settlement

import (
	"context"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/membership"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// view is what the store says about a job's settlement, with the
// settlement this processor derives itself.
type view struct {
	own      escrow.Settlement
	proposal *escrow.Settlement
	// sigs are the members' signatures over own, one per signer.
	sigs    []escrow.SignedBy
	mine    bool // this processor's signature is among them
	member  bool // this processor is a member of the job
	settled bool
	// verdict and its record are what own was derived from (none for a
	// failure settlement): the outcome summary is written from them.
	verdict *records.VerdictRecord
	v       microjob.Verdict
}

// view reads a finished job's settlement records and derives its own
// settlement from the verdict the processor recomputed from its replica
// (Verdicts.Audit).
func (s *Settler) view(ctx context.Context, j Job) (view, error) {
	recs, err := s.p.Verdicts.Records(ctx, j.ID)
	if err != nil {
		return view{}, err
	}
	var cv view
	if recs.Settled {
		cv.settled = true
		return cv, nil
	}
	if j.Failed != nil {
		return s.failureView(ctx, j, recs)
	}
	vr, v, err := s.p.Verdicts.Audit(ctx, j.ID, recs)
	if err != nil {
		return cv, err
	}
	// Payees and culprits are bound wallets, never ones a record claims,
	// and members of the job: the contract pays and slashes no other.
	if err := s.p.Wallets.CheckPayees(j.ID, vr, v); err != nil {
		return cv, err
	}
	key := membership.EscrowKey(j.Info)
	culprits, err := s.p.Members.Wallets(ctx, j.ID, key, s.p.Wallets.CulpritWallets(vr.Culprits), "culprit")
	if err != nil {
		return cv, err
	}
	if cv.own, err = DeriveSettlement(s.cfg.Dispatch, j.Info, vr, v, culprits); err != nil {
		return cv, err
	}
	cv.verdict, cv.v = &vr, v
	if err := s.checkMembers(ctx, j, key, cv.own.Payees); err != nil {
		return cv, err
	}
	return cv, s.addSignatures(ctx, j, key, recs, &cv)
}

// addSignatures fills in cv, whose own settlement is derived, the
// proposal and the members' signatures of recs, and whether this
// processor signed and is a member of job j (escrow key key).
func (s *Settler) addSignatures(ctx context.Context, j Job, key common.Hash, recs *finish.Records, cv *view) error {
	cv.proposal = recs.Proposal
	var err error
	if cv.sigs, err = s.memberSignatures(ctx, j, key, cv.own, recs.Sigs); err != nil {
		return err
	}
	for _, sig := range cv.sigs {
		cv.mine = cv.mine || sig.Signer == s.wallet
	}
	cv.member, err = s.p.Members.IsMember(ctx, key, s.wallet)
	return err
}

// checkMembers refuses (ErrNonMemberPayee) a settlement that pays a
// wallet that is not a member of job j (escrow key key). Payees come from
// the disclosures of members only (membership.View.Filter), so this is
// the last guard, not the rule.
func (s *Settler) checkMembers(ctx context.Context, j Job, key common.Hash, payees []common.Address) error {
	list := make([]string, len(payees))
	for i, p := range payees {
		list[i] = strings.ToLower(p.Hex())
	}
	members, err := s.p.Members.Wallets(ctx, j.ID, key, list, "payee")
	if err != nil {
		return err
	}
	if len(members) != len(list) {
		return fmt.Errorf("%w: job %s", ErrNonMemberPayee, j.ID)
	}
	return nil
}

// memberSignatures are the signatures of sigs that count for st: over st
// in this chain's domain, by a member of job j (escrow key key), one per
// signer.
func (s *Settler) memberSignatures(ctx context.Context, j Job, key common.Hash, st escrow.Settlement, sigs []escrow.SignedSettlement) ([]escrow.SignedBy, error) {
	domain := s.p.Chain.Domain()
	digest := st.Digest(domain)
	seen := map[common.Address]bool{}
	var out []escrow.SignedBy
	for _, sig := range sigs {
		if seen[sig.Signer] || sig.Settlement.Digest(domain) != digest || sig.Domain.Separator() != domain.Separator() {
			continue
		}
		ok, err := s.p.Members.IsMember(ctx, key, sig.Signer)
		if err != nil {
			return nil, err
		}
		if !ok {
			s.p.Members.Count("signature", j.ID.String()+" "+sig.Signer.Hex(), "settlement signature not counted: its signer is not a member of the job's escrow",
				"job", j.ID, "signer", sig.Signer)
			continue
		}
		seen[sig.Signer] = true
		out = append(out, escrow.SignedBy{Signer: sig.Signer, Signature: sig.Signature})
	}
	return out, nil
}
