package meshview

import (
	"fmt"
	"testing"

	"github.com/jobmesh/jobmesh/dispatch"
)

// benchModel is the model of the benchmarks' jobs.
const benchModel = "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"

// benchView is a view of n live processors; every tenth holds the model.
func benchView(b *testing.B, n int) *View {
	b.Helper()
	ads := make([]Advertised, n)
	for i := range ads {
		ads[i] = Advertised{PeerID: fmt.Sprintf("p%05d", i), VRAMMiB: 16384}
		if i%10 == 0 {
			ads[i].Models = []string{benchModel}
		}
	}
	return modelView(b, ads)
}

// BenchmarkJobWeights: one queue-owner choice's weights for a job with a
// model, 8 requesters among 1,000 live processors; "cached" is every
// choice after the first in a view, "fresh" a new view each time.
func BenchmarkJobWeights(b *testing.B) {
	v := benchView(b, 1000)
	job := dispatch.Job{ID: "j", Models: []string{benchModel}}
	ids := []string{"p00000", "p00001", "p00010", "p00500", "p00999", "x", "p00123", "p00700"}
	b.Run("cached", func(b *testing.B) {
		for b.Loop() {
			v.JobWeights(job, ids)
		}
	})
	b.Run("fresh", func(b *testing.B) {
		for b.Loop() {
			v.jobs = newJobCache()
			v.JobWeights(job, ids)
		}
	})
}

// BenchmarkViewPreDownloads: the pre-download derivation of one job over
// 1,000 live processors, uncached (what each node computes once per view
// and job).
func BenchmarkViewPreDownloads(b *testing.B) {
	ads := make([]Advertised, 1000)
	for i := range ads {
		ads[i] = Advertised{PeerID: fmt.Sprintf("p%05d", i), VRAMMiB: 16384}
	}
	ads[0].Models = []string{benchModel}
	v := modelView(b, ads)
	job := dispatch.Job{ID: "j", Models: []string{benchModel}}
	cfg := dispatch.DefaultConfig()
	for b.Loop() {
		v.jobs = newJobCache()
		if _, err := v.PreDownloads(cfg, job, []byte("seed")); err != nil {
			b.Fatal(err)
		}
	}
}
