package processor

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
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

// TestAvoidSelfCheck: a room's Avoid rule keeps a processor from taking a
// verifier beside a regular MicroJob it checks (held or already run), in
// either order, and lets everything else through.
func TestAvoidSelfCheck(t *testing.T) {
	plan := roundsPlan(t)
	m := plan.Macros[0]
	var verifier jobs.ID
	var checked, unchecked []jobs.ID
	for _, mu := range m.Micros {
		if mu.Verifier {
			verifier = mu.ID
		}
	}
	for _, mu := range m.Micros {
		if !mu.Verifier {
			if checks(plan, verifier, mu.ID) {
				checked = append(checked, mu.ID)
			} else {
				unchecked = append(unchecked, mu.ID)
			}
		}
	}
	if len(checked) == 0 {
		t.Fatal("the verifier checks no regular MicroJob")
	}
	w := &Worker{}
	js := &jobState{plan: plan}
	avoid := w.avoidSelfCheck(js)
	id := func(h jobs.ID) macrojob.ID { return macrojob.ID(h.String()) }
	if !avoid(id(verifier), []macrojob.ID{id(checked[0])}) || !avoid(id(checked[0]), []macrojob.ID{id(verifier)}) {
		t.Fatal("a verifier beside a regular MicroJob it checks is not avoided")
	}
	if avoid(id(verifier), nil) || avoid(id(checked[0]), nil) {
		t.Fatal("avoided with nothing taken")
	}
	for _, u := range unchecked {
		if avoid(id(verifier), []macrojob.ID{id(u)}) {
			t.Fatal("avoided beside a regular MicroJob the verifier does not check")
		}
	}
	js.mine = map[jobs.ID]bool{checked[0]: true}
	if !avoid(id(verifier), nil) {
		t.Fatal("a verifier is not avoided after running a regular MicroJob it checks")
	}
	if avoid(macrojob.ID("not-a-hash#1"), nil) {
		t.Fatal("an item that names no MicroJob is avoided")
	}
}
