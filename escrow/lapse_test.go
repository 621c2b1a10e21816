package escrow

import (
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// TestSilentCreatorStillPays: a creator that never reveals its check seed
// does not get the price back for its silence. The members settle with a
// zero seed (they checked the work with the lapse seed), the processors
// are paid, and the creator is credited only what the settlement leaves;
// a refund after the deadline finds the job settled. A non-zero seed that
// is not the creator's is still refused.
func TestSilentCreatorStillPays(t *testing.T) {
	h := stakedHarness(t)
	jobID, _ := h.createJob(creator, ether(10), time.Hour)
	h.join(jobID, 1, 2, 3)
	d := h.clients[0].Domain()
	if err := h.chain.AdvanceTime(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	forged := h.settlement(jobID, common.Hash{7}, ether(3), []int{1, 2, 3}, nil)
	_, err := h.clients[outsider].Settle(h.ctx, forged, h.sign(d, forged, 1, 2, 3))
	expectRevert(t, err, ErrBadSeed, "BadSeed")

	lapsed := h.settlement(jobID, common.Hash{}, ether(3), []int{1, 2, 3}, nil)
	if _, err := h.clients[outsider].Settle(h.ctx, lapsed, h.sign(d, lapsed, 1, 2, 3)); err != nil {
		t.Fatalf("settling a lapsed job: %v", err)
	}
	for _, i := range []int{1, 2, 3} {
		if cr, _ := h.clients[0].CreditOf(h.ctx, h.addr(i)); cr.Cmp(ether(3)) != 0 {
			t.Fatalf("processor %d credited %v, want 3 ether", i, cr)
		}
	}
	if cr, _ := h.clients[0].CreditOf(h.ctx, h.addr(creator)); cr.Cmp(ether(1)) != 0 {
		t.Fatalf("silent creator credited %v, want the 1 ether the settlement leaves", cr)
	}
	if err := h.chain.AdvanceTime(2 * time.Hour); err != nil {
		t.Fatal(err)
	}
	_, err = h.clients[outsider].Refund(h.ctx, jobID)
	expectRevert(t, err, ErrJobNotFunded, "JobNotFunded")
	h.checkConservation()
}
