package dispatch

import (
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/internal/cputime"
)

// reportCPU adds a cpu-ns/op metric for the loop that started at start.
func reportCPU(b *testing.B, start time.Duration) {
	if b.N > 0 && start >= 0 {
		b.ReportMetric(float64(cputime.Process()-start)/float64(b.N), "cpu-ns/op")
	}
}

// The benchmark mesh: 10,000 processors over 20 card models and 5 VRAM
// sizes, 10% holding the model "sd-base"; 100,000 queued jobs over the
// matching (VRAM, model or Any) groups, 1 in 20 replicated on 3 processors.
const (
	benchNodes = 10_000
	benchJobs  = 100_000
)

var benchVRAM = []uint64{8192, 12288, 16384, 24576, 81920}

func benchNode(i int) Node {
	n := Node{
		ID:        fmt.Sprintf("12D3KooW%08d", i),
		CardModel: fmt.Sprintf("card-%02d", i%20),
		VRAM:      benchVRAM[(i/20)%len(benchVRAM)],
		Stake:     new(big.Int).Mul(big.NewInt(int64(1+i%97)), big.NewInt(1e18)),
		QoS:       float64(1+i%10) / 10,
	}
	if i%10 == 0 {
		n.LocalModels = []string{"sd-base"}
	}
	return n
}

func benchJob(i int) Job {
	j := Job{
		ID:      fmt.Sprintf("job-%08d", i),
		Price:   new(big.Int).Mul(big.NewInt(int64(1+(i*7919)%100_000)), big.NewInt(1e12)),
		MinVRAM: benchVRAM[i%4],
		Units:   uint64(1 + i%9),
	}
	if i%3 == 0 {
		j.GPUModel = fmt.Sprintf("card-%02d", i%20)
	}
	if i%20 == 0 {
		j.Replicas = 3
	}
	return j
}

// BenchmarkSelect times one processor choice for a new job among 10,000
// free processors (grading, locality, weights, seeded draw, pre-download).
func BenchmarkSelect(b *testing.B) {
	p := mustPool(b)
	for i := range benchNodes {
		if err := p.Add(benchNode(i), true); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name string
		job  Job
	}{
		{"any-10000-candidates", Job{ID: "j", Price: big.NewInt(1), MinVRAM: 8192, Units: 1}},
		{"model-locality", Job{ID: "j", Price: big.NewInt(1), MinVRAM: 8192, Units: 1, Models: []string{"sd-base"}}},
		{"replicas-3", Job{ID: "j", Price: big.NewInt(1), MinVRAM: 8192, Units: 1, Replicas: 3}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			seed := Seed([]byte(bc.job.ID))
			start := cputime.Process()
			for b.Loop() {
				if _, err := p.Select(bc.job, seed); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, start)
		})
	}
}

// BenchmarkQueueNext isolates the queue: the best head for a processor among
// the groups of 100,000 jobs, removed and pushed back.
func BenchmarkQueueNext(b *testing.B) {
	q := mustQueue(b, DefaultConfig())
	for i := range benchJobs {
		if err := q.Push(benchJob(i)); err != nil {
			b.Fatal(err)
		}
	}
	all := func(string, uint64, int) bool { return true }
	i := 0
	start := cputime.Process()
	for b.Loop() {
		n := benchNode(i)
		j, ok := q.Next(n, all)
		if !ok {
			b.Fatal("empty")
		}
		if err := q.Push(j); err != nil {
			b.Fatal(err)
		}
		i++
	}
	reportCPU(b, start)
}
