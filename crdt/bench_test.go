package crdt_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
)

// BenchmarkConvergence measures how long a record written on one of 10
// replicas takes to be readable on all of them (each replica's Watch fires
// after the value is applied, so it is readable from then on). Writers
// rotate over the replicas. Reports p50 and p99 in milliseconds.
//
//	go test ./crdt -run '^$' -bench Convergence -benchtime 500x -count 3
func BenchmarkConvergence(b *testing.B) {
	const n = 10
	c := crdttest.New(b, crdttest.Options{Replicas: n, Configure: func(_ int, cfg *crdt.Config) {
		// Catch-up is not under test; keep re-announcements rare.
		cfg.RebroadcastInterval = time.Minute
	}})
	ctx := context.Background()
	watches := make([]<-chan crdt.Change, n)
	for i, r := range c.Replicas {
		watches[i] = r.Store.Watch(ctx, "/bench")
	}
	payload := make([]byte, 512)
	lat := make([]time.Duration, 0, b.N)
	for i := 0; b.Loop(); i++ {
		key := fmt.Sprintf("/bench/%d", i)
		start := time.Now()
		if err := c.Replicas[i%n].Store.Put(ctx, key, "bench", payload); err != nil {
			b.Fatal(err)
		}
		for j, w := range watches {
			for {
				select {
				case ch := <-w:
					if ch.Kind == crdt.ChangeOverflow {
						b.Fatalf("replica %d watcher overflowed", j)
					}
					if ch.Key != key {
						continue
					}
				case <-time.After(30 * time.Second):
					b.Fatalf("replica %d never saw %s", j, key)
				}
				break
			}
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// BenchmarkQuery reads 1000 records under one prefix, with the verified-record
// cache in effect (default) and defeated (size 1, so every read checks the
// signature).
//
//	go test ./crdt -run '^$' -bench Query -benchtime 20x
func BenchmarkQuery(b *testing.B) {
	for _, cache := range []int{1, crdt.DefaultConfig().VerifiedCache} {
		b.Run(fmt.Sprintf("verifiedCache=%d", cache), func(b *testing.B) {
			c := crdttest.New(b, crdttest.Options{Replicas: 1, Configure: func(_ int, cfg *crdt.Config) {
				cfg.VerifiedCache = cache
			}})
			s := c.Replicas[0].Store
			ctx := context.Background()
			const n = 1000
			for i := range n {
				if err := s.Put(ctx, fmt.Sprintf("/q/%04d", i), "job", make([]byte, 256)); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				recs, err := s.Query(ctx, "/q")
				if err != nil || len(recs) != n {
					b.Fatalf("%d records, %v", len(recs), err)
				}
			}
		})
	}
}
