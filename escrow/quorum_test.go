package escrow

import "testing"

func TestQuorumReadsDeployParams(t *testing.T) {
	h := newHarness(t, 2)
	num, den, err := h.clients[1].Quorum(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if num.Uint64() != h.params.QuorumNumerator || den.Uint64() != h.params.QuorumDenominator {
		t.Fatalf("quorum %v/%v, deployed %d/%d", num, den, h.params.QuorumNumerator, h.params.QuorumDenominator)
	}
}
