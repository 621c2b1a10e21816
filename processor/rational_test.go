package processor_test

import (
	"context"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// TestRationalLiarIsCaughtAsPredicted: a processor that lies in about
// one block per MicroJob (localmesh.RationalLiar), never in a check,
// cannot aim its lies at unchecked blocks: the checks are drawn after its
// commitments. Once the checks are known, whether it must be named
// follows from them (a verifier block is one it lied in), and then the
// verdict names it; no honest processor is ever named. Over the runs,
// the count named stays within three standard deviations of the count
// the hidden checks predict before they are drawn (Σ over jobs of
// 1 − Π over its MicroJobs of (1 − lied/K)), which is what the simulator
// (package checksim) measures. JOBMESH_RATIONAL_RUNS sets the number of
// jobs (default 3).
func TestRationalLiarIsCaughtAsPredicted(t *testing.T) {
	const k = 4
	runs := 3
	if s := os.Getenv("JOBMESH_RATIONAL_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("JOBMESH_RATIONAL_RUNS=%q", s)
		}
		runs = n
	}
	const liarIndex = 1
	m := flowMesh(t, 4, func(mem *localmesh.Member, pc *processor.Config) {
		if mem.Index == liarIndex {
			pc.Tamper = localmesh.RationalLiar(k)
		}
	})
	liar := m.Members[liarIndex].Host.ID().String()
	var named int
	var expected, variance float64
	for run := range runs {
		job := newMandelbrot(t, 192, 160, 32)
		info, res := runJob(t, m, job.spec(3, k), 4*time.Minute)
		must, p := rationalOutcome(t, info, res.Verdict.CheckSeed, committedBy(t, m, info, liar), k)
		got := slices.Contains(res.Culprits, liar)
		if must && !got {
			t.Fatalf("run %d: a verifier block is one the liar lied in, yet the verdict does not name it", run)
		}
		if got && !must {
			// A duplicate of one of its MicroJobs (a lock taken over)
			// can name it too.
			t.Logf("run %d: liar named through a duplicate, not a check", run)
		}
		for _, c := range res.Culprits {
			if c != liar {
				t.Fatalf("run %d: honest processor %s named", run, c)
			}
		}
		if got {
			named++
		}
		expected += p
		variance += p * (1 - p)
	}
	t.Logf("liar named in %d of %d jobs; the hidden checks predict %.2f (sd %.2f)", named, runs, expected, math.Sqrt(variance))
	if math.Abs(float64(named)-expected) > 3*math.Sqrt(variance)+0.5 {
		t.Fatalf("liar named %d times, predicted %.2f ± %.2f", named, expected, 3*math.Sqrt(variance))
	}
}

// committedBy is the set of MicroJobs the processor committed to in the
// job, read from the client's store. The final verdict cannot tell: once
// the liar is named its MicroJobs are redone by others, and the verdict
// of the redone round holds their results, not the liar's.
func committedBy(t *testing.T, m *localmesh.Mesh, info *jobs.JobInfo, processor string) map[jobs.ID]bool {
	t.Helper()
	recs, err := client(m).Store.Query(context.Background(), records.JobKey(info.ID())+"/")
	if err != nil {
		t.Fatal(err)
	}
	ran := map[jobs.ID]bool{}
	for _, r := range recs {
		if r.Type != records.CommitType || r.Author.String() != processor {
			continue
		}
		c, err := records.OpenCommitment(r.Key, r.Author.String(), r.Payload)
		if err != nil {
			t.Fatalf("commitment %s: %v", r.Key, err)
		}
		ran[c.MicroID] = true
	}
	return ran
}

// rationalOutcome says, for a job whose verdict has the given check seed,
// given the regular MicroJobs the liar committed to, whether a verifier
// block is one the liar lied in (it must then be named), and the
// probability of that before the checks were drawn.
func rationalOutcome(t *testing.T, info *jobs.JobInfo, checkSeed string, ran map[jobs.ID]bool, k uint64) (bool, float64) {
	t.Helper()
	seed, err := jobs.ParseHash(checkSeed)
	if err != nil {
		t.Fatalf("check seed %q: %v", checkSeed, err)
	}
	plan, err := jobs.SliceChecked(info, seed)
	if err != nil {
		t.Fatal(err)
	}
	must, escape := false, 1.0
	for _, mac := range plan.Macros {
		ver := mac.Verifier()
		for pos, src := range ver.Sources {
			mu := mac.Micros[src.Slot]
			if ran[mu.ID] && localmesh.RationalLies(k, ver.Blocks[pos]) {
				must = true
			}
		}
		for _, mu := range mac.Micros[:mac.Regular] {
			if !ran[mu.ID] {
				continue
			}
			lied := 0
			for _, b := range mu.Blocks {
				if localmesh.RationalLies(k, b) {
					lied++
				}
			}
			escape *= 1 - float64(lied)/float64(len(mu.Blocks))
		}
	}
	return must, 1 - escape
}
