package processor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/processor"
)

// BenchmarkGroupReplicas times one job of 2 MacroJobs of 8 one-block
// MicroJobs (and a verifier each), 20 ms a block, on four processors of
// one card model, for R = 1, 2, 3: the wall time per job, and the runs
// per block (R plus whatever duplicates the flow made).
func BenchmarkGroupReplicas(b *testing.B) {
	for _, r := range []uint32{1, 2, 3} {
		b.Run(fmt.Sprintf("R=%d", r), func(b *testing.B) {
			exec := &waitExec{cost: 20 * time.Millisecond}
			m := meshtest.New(b, localmesh.Options{
				Processors: 4, Clients: 1,
				Processor: func(_ *localmesh.Member, pc *processor.Config) {
					testTimeouts(pc)
					pc.FactsEvery = 300 * time.Millisecond
					pc.DiscloseGrace = 3 * time.Second
					pc.RerunTimeout = time.Minute
					pc.Exec = exec
					pc.Probes.Window = 0 // the runs counted are the jobs' blocks only
				},
			})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			for _, p := range processorsOf(m) {
				if err := waitFor(ctx, func() bool { return p.Worker.View().Live() == 4 }); err != nil {
					b.Fatal("processors do not see each other live")
				}
			}
			c := client(m)
			var blocks int
			b.ResetTimer()
			for i := range b.N {
				spec := dispatchSpec(1000*int(r)+i, 2, 8, jobs.Requirements{Replicas: r})
				info, err := c.DApp.Submit(ctx, spec)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.DApp.Wait(ctx, info.ID(), 100*time.Millisecond); err != nil {
					b.Fatal(err)
				}
				plan, err := jobs.Slice(info)
				if err != nil {
					b.Fatal(err)
				}
				blocks += int(plan.NumBlocks)
			}
			b.StopTimer()
			b.ReportMetric(float64(exec.calls.Load())/float64(blocks), "runs/block")
		})
	}
}
