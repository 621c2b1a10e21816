package processor

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
)

// TestDesignatedFinalizer: every order of the same disclosures names the
// same finalizer, a culprit is never named, each discloser is named for
// some jobs, and nobody is named without disclosures.
func TestDesignatedFinalizer(t *testing.T) {
	procs := []string{"peerA", "peerB", "peerC", "peerD"}
	named := map[string]int{}
	rng := rand.New(rand.NewPCG(1, 2))
	for j := range 200 {
		id := jobs.ID(sha256.Sum256([]byte(fmt.Sprint("job", j))))
		recs := newJobRecords()
		for i, p := range procs {
			recs.discl = append(recs.discl, microjob.Disclosure{Processor: p, MicroID: jobs.ID{byte(i)}})
		}
		want := designatedFinalizer(id, recs, nil)
		if !slices.Contains(procs, want) {
			t.Fatalf("job %d: named %q", j, want)
		}
		named[want]++
		for range 5 {
			rng.Shuffle(len(recs.discl), func(a, b int) { recs.discl[a], recs.discl[b] = recs.discl[b], recs.discl[a] })
			if got := designatedFinalizer(id, recs, nil); got != want {
				t.Fatalf("job %d: %q in one order, %q in another", j, want, got)
			}
		}
		if got := designatedFinalizer(id, recs, []string{want}); got == want || got == "" {
			t.Fatalf("job %d: culprit %q named, or nobody: %q", j, want, got)
		}
	}
	for _, p := range procs {
		if named[p] == 0 {
			t.Errorf("%s never named in 200 jobs: %v", p, named)
		}
	}
	if got := designatedFinalizer(jobs.ID{}, newJobRecords(), nil); got != "" {
		t.Errorf("named %q without disclosures", got)
	}
}
