package microjob

import (
	"slices"
	"strings"
	"testing"

	"github.com/jobmesh/jobmesh/jobs"
)

// newReplicaFixture is newFixture's job with R replicas: every MicroJob is
// run by the same r processors (a group), honestly unless out says
// otherwise for a processor.
func newReplicaFixture(t testing.TB, r uint32, out map[int]func(uint64, []byte) []byte) (*fixture, []string) {
	t.Helper()
	base := newFixture(t, nil)
	info := *base.info
	info.Requirements.Replicas = r
	plan, err := jobs.SliceChecked(&info, info.SeedCommitment)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{info: &info, plan: plan, procs: map[jobs.ID]string{}}
	group := make([]string, r)
	for i := range group {
		group[i] = newPeer(t)
	}
	for m := range plan.Macros {
		for s := range plan.Macros[m].Micros {
			mu := &plan.Macros[m].Micros[s]
			for i, p := range group {
				o := out[i]
				if o == nil {
					o = honest
				}
				f.add(t, mu, p, o)
			}
		}
	}
	return f, group
}

func TestJudgeReplicasAgree(t *testing.T) {
	f, group := newReplicaFixture(t, 3, nil)
	v := f.judge(t)
	if !v.Complete || !v.Verified || len(v.Disputes)+len(v.Culprits)+len(v.Short)+len(v.Missing)+len(v.Redo) != 0 {
		t.Fatalf("three agreeing replicas: complete %v verified %v disputes %v culprits %v short %v", v.Complete, v.Verified, v.Disputes, v.Culprits, v.Short)
	}
	n := f.plan.NumMicroJobs()
	for _, p := range group {
		if v.Counts[p] != n {
			t.Fatalf("processor credited %d MicroJobs, want %d: %v", v.Counts[p], n, v.Counts)
		}
	}
	if len(v.Results) != 3*n || v.Replicas != 3 {
		t.Fatalf("%d results, replicas %d; want %d, 3", len(v.Results), v.Replicas, 3*n)
	}
	for m, c := range v.Committed {
		if c != 3 {
			t.Fatalf("MicroJob %s has %d committers, want 3", m, c)
		}
	}
	// The encoding round-trips with the replica fields.
	d, err := DecodeVerdict(v.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Encode(), v.Encode()) {
		t.Fatal("replicated verdict does not round-trip")
	}
}

func TestJudgeReplicasMajorityNamesLiar(t *testing.T) {
	// The second processor lies on one block of the first MacroJob.
	f, group := newReplicaFixture(t, 3, map[int]func(uint64, []byte) []byte{1: lieOn(4)})
	v := f.judge(t)
	if !slices.Equal(v.Culprits, []string{group[1]}) {
		t.Fatalf("culprits %v, want the liar %s", v.Culprits, group[1])
	}
	if len(v.Disputes) != 0 || !v.Complete || !v.Verified {
		t.Fatalf("a majority decides without a dispute: disputes %v complete %v verified %v short %v redo %v", v.Disputes, v.Complete, v.Verified, v.Short, v.Redo)
	}
	if v.Counts[group[1]] != 0 || v.Counts[group[0]] != f.plan.NumMicroJobs() {
		t.Fatalf("counts %v: the liar is credited nothing, the others everything", v.Counts)
	}
	// The accepted result of the lied-on MicroJob is an honest one.
	for _, r := range v.Results {
		if r.Processor == group[1] && v.ResultCIDs[r.MicroID] == r.ResultCID {
			t.Fatalf("the liar's result was accepted for %s", r.MicroID)
		}
	}
}

func TestJudgeReplicasNoMajorityDisputes(t *testing.T) {
	// Two of three lie differently on block 4: three distinct hashes.
	other := func(b uint64, out []byte) []byte {
		if b == 4 {
			return append(out, '?')
		}
		return out
	}
	f, _ := newReplicaFixture(t, 3, map[int]func(uint64, []byte) []byte{1: lieOn(4), 2: other})
	v := f.judge(t)
	if len(v.Culprits) != 0 {
		t.Fatalf("no majority, yet culprits %v", v.Culprits)
	}
	var onBlock int
	for _, d := range v.Disputes {
		id, _ := jobs.ParseHash(d.Micros[0])
		if mu, err := f.plan.MicroJob(id); err == nil && d.Block == 4 && d.Micros[0] == d.Micros[1] && !mu.Verifier {
			onBlock++
		}
	}
	if onBlock != 3 || v.Verified {
		t.Fatalf("want 3 disputes between the replicas of block 4, got %d (%v), verified %v", onBlock, v.Disputes, v.Verified)
	}
}

func TestJudgeReplicasWaitsForR(t *testing.T) {
	f, group := newReplicaFixture(t, 3, nil)
	// The third member has committed to nothing and disclosed nothing: two
	// agreeing results of three are not enough.
	f.commits = slices.DeleteFunc(f.commits, func(c Commitment) bool { return c.Processor == group[2] })
	f.discl = slices.DeleteFunc(f.discl, func(d Disclosure) bool { return d.Processor == group[2] })
	v := f.judge(t)
	if v.Complete || len(v.Short) != f.plan.NumMicroJobs() {
		t.Fatalf("two of three replicas: complete %v, short %d of %d", v.Complete, len(v.Short), f.plan.NumMicroJobs())
	}

	// A culprit's commitment without its disclosure (the wiring leaves
	// out a culprit's results) still counts toward R: the other two are a
	// majority and decide.
	f, group = newReplicaFixture(t, 3, nil)
	f.discl = slices.DeleteFunc(f.discl, func(d Disclosure) bool { return d.Processor == group[2] })
	v = f.judge(t)
	if !v.Complete || len(v.Short) != 0 {
		t.Fatalf("three committed, two agreeing disclosures: complete %v, short %v", v.Complete, v.Short)
	}

	// One disclosure of three commitments is no majority.
	f, group = newReplicaFixture(t, 3, nil)
	f.discl = slices.DeleteFunc(f.discl, func(d Disclosure) bool { return d.Processor != group[0] })
	if v = f.judge(t); v.Complete {
		t.Fatal("one disclosure of three replicas is complete")
	}
}

func TestJudgeReplicasOneIsUnchanged(t *testing.T) {
	// R = 1 verdicts carry none of the replica fields.
	f := newFixture(t, nil)
	v := f.judge(t)
	if v.Replicas != 0 || v.Committed != nil || v.Short != nil {
		t.Fatalf("R = 1 verdict has replica fields: %d %v %v", v.Replicas, v.Committed, v.Short)
	}
	for _, field := range []string{`"replicas"`, `"committed"`, `"short"`} {
		if strings.Contains(string(v.Encode()), field) {
			t.Fatalf("R = 1 encoding has %s", field)
		}
	}
}
