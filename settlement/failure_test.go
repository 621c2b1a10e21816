package settlement_test

import (
	"crypto/sha256"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/settlement"
)

// TestFailureSettlement: a failure settlement keeps the contract's list
// rules, pays nothing, names no culprit, has a zero seed and result root,
// and its verifier hash tells the failure (job, MicroJob, kind, exit
// code) apart.
func TestFailureSettlement(t *testing.T) {
	id, micro := jobs.ID(sha256.Sum256([]byte("job"))), jobs.ID(sha256.Sum256([]byte("micro")))
	key, payee := common.HexToHash("0x01"), common.HexToAddress("0x02")
	fj := finish.FailedJob{Micro: micro, Failure: records.Failure{Kind: records.FailExit, ExitCode: 2}}
	s := settlement.FailureSettlement(key, id, fj, payee)
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.Key != key || s.Seed != (common.Hash{}) || s.ResultRoot != (common.Hash{}) || len(s.Culprits) != 0 ||
		len(s.Payees) != 1 || s.Payees[0] != payee || s.Total().Sign() != 0 {
		t.Fatalf("failure settlement %+v", s)
	}
	if !settlement.IsFailureRelease(&escrow.Release{ResultRoot: s.ResultRoot}) || settlement.IsFailureRelease(nil) {
		t.Fatal("IsFailureRelease")
	}
	digests := map[common.Hash]string{}
	for name, d := range map[string]common.Hash{
		"exit 2":       s.VerifierHash,
		"exit 3":       settlement.FailureDigest(id, micro, records.Failure{Kind: records.FailExit, ExitCode: 3}),
		"trap":         settlement.FailureDigest(id, micro, records.Failure{Kind: records.FailTrap}),
		"other micro":  settlement.FailureDigest(id, id, fj.Failure),
		"other job":    settlement.FailureDigest(micro, micro, fj.Failure),
		"stderr aside": settlement.FailureDigest(id, micro, records.Failure{Kind: records.FailExit, ExitCode: 2, Stderr: "x"}),
	} {
		if other, dup := digests[d]; dup && !(name == "stderr aside" && other == "exit 2" || name == "exit 2" && other == "stderr aside") {
			t.Fatalf("%s and %s have one digest", name, other)
		}
		digests[d] = name
	}
	if len(digests) != 5 {
		t.Fatalf("%d distinct digests, want 5 (stderr does not count)", len(digests))
	}
}
