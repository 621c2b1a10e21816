package meshtest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/internal/cputime"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/localmesh"
)

// seen is one node's first sight of a key, from its Watch.
type seen struct {
	node int
	key  string
	at   time.Time
}

// BenchmarkStoreConvergence measures how long a record written on one node
// takes to become readable on every node of an in-process mesh on
// 127.0.0.1. Each iteration is one write, by the members in turn; its
// latency runs from just before Put to the moment the last node's Watch
// delivered the key, so no polling interval enters the figure. Writes go
// one at a time, so the figure is propagation, not queueing.
//
// Run with a fixed write count, for example -benchtime=100x; the mesh is
// built once per sub-benchmark (b.Loop runs the body once). With
// JOBMESH_BENCH_TRACE=1 every write's sightings (node:ms) go to stderr.
func BenchmarkStoreConvergence(b *testing.B) {
	for _, nodes := range []int{10, 30} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			benchConvergence(b, nodes)
		})
	}
}

func benchConvergence(b *testing.B, nodes int) {
	trace := os.Getenv("JOBMESH_BENCH_TRACE") == "1"
	m := New(b, localmesh.Options{Processors: nodes - 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	WaitConnected(b, m)
	settle(b, ctx, m, nodes)

	sightings := make(chan seen, 4*nodes)
	for _, mem := range m.Members {
		ch := mem.Store.Watch(ctx, "/bench")
		go func(i int) {
			for c := range ch {
				if c.Kind != crdt.ChangePut {
					// Consumed promptly, so no overflow; were one to
					// happen, a key would go missing and its write below
					// would fail on the timeout.
					continue
				}
				select {
				case sightings <- seen{node: i, key: c.Key, at: time.Now()}:
				case <-ctx.Done():
					return
				}
			}
		}(mem.Index)
	}

	// The idle mesh's own CPU use (heartbeats, rebroadcasts, DHT upkeep),
	// measured over a fixed period: it is the floor under every write.
	idle0, idleStart := cputime.Process(), time.Now()
	time.Sleep(2 * time.Second)
	idleCPU := float64(cputime.Process()-idle0) / float64(time.Since(idleStart))

	var lat, first []time.Duration
	cpu0 := cputime.Process()
	i := 0
	for b.Loop() {
		w := m.Members[i%nodes]
		key := fmt.Sprintf("/bench/%d", i)
		i++
		start := time.Now()
		if err := w.Store.Put(ctx, key, "bench", []byte(key)); err != nil {
			b.Fatal(err)
		}
		got := make(map[int]bool, nodes)
		var order []string
		var firstRemote, last time.Time
		timeout := time.NewTimer(30 * time.Second)
		for len(got) < nodes {
			select {
			case s := <-sightings:
				if s.key != key {
					b.Fatalf("node %d saw %s while waiting for %s", s.node, s.key, key)
				}
				if got[s.node] {
					continue // a later value of the same key; the first sight counts
				}
				got[s.node] = true
				last = s.at
				if s.node != w.Index && firstRemote.IsZero() {
					firstRemote = s.at
				}
				order = append(order, fmt.Sprintf("%d:%d", s.node, s.at.Sub(start).Milliseconds()))
			case <-timeout.C:
				b.Fatalf("%s reached %d of %d nodes within 30s", key, len(got), nodes)
			}
		}
		timeout.Stop()
		lat = append(lat, last.Sub(start))
		first = append(first, firstRemote.Sub(start))
		if trace {
			fmt.Fprintf(os.Stderr, "write %d by node %d: %s; sightings %s\n",
				i-1, w.Index, last.Sub(start).Round(time.Millisecond), strings.Join(order, " "))
		}
	}
	cpu := cputime.Process() - cpu0
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(percentile(lat, 50)), "p50-ms")
	b.ReportMetric(ms(percentile(lat, 99)), "p99-ms")
	b.ReportMetric(ms(slices.Max(lat)), "max-ms")
	b.ReportMetric(ms(percentile(first, 50)), "first-p50-ms")
	if cpu0 >= 0 {
		// All nodes share this process, so this is the whole mesh's CPU
		// per write, background work (heartbeats, rebroadcasts) included.
		b.ReportMetric(ms(cpu/time.Duration(len(lat))), "cpu-ms/write")
		b.ReportMetric(100*idleCPU, "idle-cpu-%")
	}
}

// settle waits until every node's store holds every processor's
// advertisement: the store's gossip mesh and DAG exchange then work end to
// end, so the measured writes do not include start-up.
func settle(b *testing.B, ctx context.Context, m *localmesh.Mesh, nodes int) {
	b.Helper()
	wait.Until(b, 120*time.Second, func() error {
		for _, mem := range m.Members {
			ads, err := mem.Processors(ctx)
			if err != nil {
				return err
			}
			if len(ads) != nodes-1 {
				return fmt.Errorf("member %d sees %d of %d processors", mem.Index, len(ads), nodes-1)
			}
		}
		return nil
	})
}

// percentile returns the p-th percentile (nearest rank) of d.
func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	rank := (p*len(s) + 99) / 100 // ceil(p/100 · n)
	return s[max(rank, 1)-1]
}
