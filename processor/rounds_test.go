package processor_test

import (
	"context"
	"maps"
	"math/big"
	"slices"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
)

// checkSpeedSplit checks a settled job's verdict record and payouts: the
// record has rounds for every MacroJob of the plan, and the payouts are
// the split by speed, computed here from the record alone: each credited
// result earns its processor's round scores ([10 5 2]) in its MacroJob, at
// least 4, the task score of the table's last place.
func checkSpeedSplit(t *testing.T, m *localmesh.Mesh, info *jobs.JobInfo, res dapp.Result) {
	t.Helper()
	// Inline or in a body: the client's node reads either.
	chosen, err := finish.ReadVerdict(context.Background(), client(m).Store, client(m).IPFS, info.ID(), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, v := chosen.Record, chosen.Verdict
	plan, err := jobs.Slice(info)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Rounds) != len(plan.Macros) {
		t.Fatalf("rounds for %d of %d MacroJobs", len(rec.Rounds), len(plan.Macros))
	}
	points := func(list []string, p string) uint64 {
		i := slices.Index(list, p)
		if i < 0 || i >= 3 {
			return 0
		}
		return []uint64{10, 5, 2}[i]
	}
	culprit := map[string]bool{}
	for _, c := range append(slices.Clone(rec.Culprits), v.Culprits...) {
		culprit[c] = true
	}
	speed, count := map[common.Address]uint64{}, map[common.Address]uint64{}
	for _, x := range v.Results {
		if culprit[x.Processor] {
			continue
		}
		if rec.Rounds[x.Macro].Macro != x.Macro {
			t.Fatalf("rounds %d are of MacroJob %d", x.Macro, rec.Rounds[x.Macro].Macro)
		}
		if !slices.Contains(rec.Rounds[x.Macro].Disclosures, x.Processor) {
			t.Fatalf("credited %s is not among MacroJob %d's disclosers %v", x.Processor, x.Macro, rec.Rounds[x.Macro].Disclosures)
		}
		a := common.HexToAddress(x.Wallet)
		speed[a] += max(4, points(rec.Rounds[x.Macro].Commits, x.Processor)+points(rec.Rounds[x.Macro].Disclosures, x.Processor))
		count[a]++
	}
	payees := slices.SortedFunc(maps.Keys(speed), func(a, b common.Address) int { return a.Cmp(b) })
	split := func(w map[common.Address]uint64) []*big.Int {
		ws := make([]uint64, len(payees))
		for i, a := range payees {
			ws[i] = w[a]
		}
		out, err := dispatch.SplitFee(info.PriceWei, ws)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want, byCount := split(speed), split(count)
	rel := res.Release
	if !slices.Equal(rel.Payees, payees) {
		t.Fatalf("payees %v, want %v", rel.Payees, payees)
	}
	differs := false
	for i := range payees {
		if rel.Amounts[i].Cmp(want[i]) != 0 {
			t.Fatalf("payee %s paid %v, the split by speed gives %v (by count %v)", payees[i], rel.Amounts[i], want[i], byCount[i])
		}
		differs = differs || want[i].Cmp(byCount[i]) != 0
	}
	t.Logf("rounds %+v; payouts %v; by count they would be %v (differs: %v)", rec.Rounds, rel.Amounts, byCount, differs)
}
