package microjob

import (
	"bytes"
	"testing"

	"github.com/jobmesh/jobmesh/jobs"
)

// benchFixture is a job of 10,000 blocks with the default N=10, K=10: 100
// MacroJobs, 1,100 MicroJobs, each disclosed by its own processor.
func benchFixture(b *testing.B) *fixture {
	b.Helper()
	data := bytes.Repeat([]byte{1}, 10_000)
	info, plan := newJob(b, []byte("code"), data, 1, 0, 0, jobs.Output{Kind: jobs.OutputConcat})
	f := &fixture{info: info, plan: plan, procs: map[jobs.ID]string{}}
	procs := make([]string, 16)
	for i := range procs {
		procs[i] = newPeer(b)
	}
	i := 0
	for m := range plan.Macros {
		for s := range plan.Macros[m].Micros {
			mu := &plan.Macros[m].Micros[s]
			f.add(b, mu, procs[i%len(procs)], honest)
			i++
		}
	}
	return f
}

func BenchmarkJudge(b *testing.B) {
	f := benchFixture(b)
	b.ResetTimer()
	for b.Loop() {
		v, err := Judge(f.info, f.plan, f.commits, f.discl)
		if err != nil || !v.Verified {
			b.Fatalf("%v %v", err, v.Verified)
		}
	}
}

func BenchmarkVerdictDecode(b *testing.B) {
	enc := benchFixture(b).judge(b).Encode()
	b.SetBytes(int64(len(enc)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := DecodeVerdict(enc); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(enc))/10_000, "verdict-bytes/block")
}
