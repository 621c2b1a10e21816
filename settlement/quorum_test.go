package settlement

import (
	"math/big"
	"testing"

	"github.com/jobmesh/jobmesh/escrow"
)

// TestQuorumCountsMembersAsTheContractDoes: the local quorum is the
// contract's: signed · den ≥ members · num, and at least the creator's
// minimum of signers.
func TestQuorumCountsMembersAsTheContractDoes(t *testing.T) {
	two, three := big.NewInt(2), big.NewInt(3)
	job := func(members int, minSigners uint8) escrow.Job {
		return escrow.Job{Members: members, Terms: escrow.Terms{MinSigners: minSigners}}
	}
	for _, tc := range []struct {
		signed int
		job    escrow.Job
		want   bool
	}{
		{2, job(3, 2), true},
		{1, job(3, 1), false}, // 1·3 < 3·2
		{3, job(4, 2), true},  // 9 ≥ 8
		{2, job(4, 2), false}, // 6 < 8: the payees alone may be too few
		{1, job(1, 2), false}, // a lone member is no quorum when two must sign
		{1, job(1, 1), true},
		{0, job(0, 1), false}, // no members, nothing to settle
		{170, job(255, 2), true},
		{169, job(255, 2), false},
	} {
		if got := Quorum(tc.signed, tc.job, two, three); got != tc.want {
			t.Errorf("%d signed of %d members, min %d: quorum %v, want %v", tc.signed, tc.job.Members, tc.job.Terms.MinSigners, got, tc.want)
		}
	}
}
