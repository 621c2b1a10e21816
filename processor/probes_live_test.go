package processor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/probe"
	"github.com/jobmesh/jobmesh/processor"
)

// TestProbesScoreIdleMesh: in a mesh without any DApp job, the probe
// tasks give every live processor a measured speed score inside each
// window, and every node's view agrees on it.
func TestProbesScoreIdleMesh(t *testing.T) {
	pcfg := probe.Config{Window: 12 * time.Second, Deadline: 3 * time.Second, History: 2}
	m := meshtest.New(t, localmesh.Options{
		Processors: 3,
		Processor: func(_ *localmesh.Member, pc *processor.Config) {
			testTimeouts(pc)
			pc.FactsEvery = 300 * time.Millisecond
			pc.Probes = pcfg
		},
	})
	procs := processorsOf(m)
	// The first window that starts after the mesh is up: every processor
	// challenges in it. Its scores reach the views after it ends; under
	// load a view may take the next window's before all agree, so a
	// score of this window or a later one counts, all views alike.
	w := pcfg.WindowOf(time.Now()) + 1
	start, end := pcfg.Start(w), pcfg.Start(w+1)
	ctx, cancel := context.WithDeadline(context.Background(), end.Add(2*pcfg.Window))
	defer cancel()
	var last error
	scored := func() bool {
		if time.Now().Before(end) {
			return false // judged once the window is over
		}
		last = probesAgree(procs, start)
		return last == nil
	}
	if err := waitFor(ctx, scored); err != nil {
		t.Fatalf("from window %d (%v): %v", w, start, last)
	}
}

// probesAgree checks that every processor's view has every processor
// live with a speed score measured since start, all views alike.
func probesAgree(procs []*localmesh.Member, start time.Time) error {
	type score struct {
		at    time.Time
		speed float64
	}
	var first map[string]score
	for _, p := range procs {
		v := p.Worker.View()
		if v.Live() != len(procs) {
			return fmt.Errorf("processor %d sees %d live", p.Index, v.Live())
		}
		got := map[string]score{}
		for _, q := range procs {
			pv, _ := v.Processor(q.Host.ID().String())
			if pv.SpeedAt.Before(start) {
				return fmt.Errorf("processor %d sees %d scored at %v", p.Index, q.Index, pv.SpeedAt)
			}
			got[pv.ID] = score{pv.SpeedAt, pv.SpeedScore}
		}
		if first == nil {
			first = got
		}
		for id, s := range got {
			if f := first[id]; !f.at.Equal(s.at) || f.speed != s.speed {
				return fmt.Errorf("processor %d sees %s scored %v at %v, the first %v at %v", p.Index, id, s.speed, s.at, f.speed, f.at)
			}
		}
	}
	return nil
}
