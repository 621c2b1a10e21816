package dispatch

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
)

// runScript drives a Dispatcher through a seeded random sequence of joins,
// submissions, releases, departures and cancellations, checks invariants
// after each step, and returns a transcript of every decision.
func runScript(t *testing.T, script []byte) string {
	t.Helper()
	cfg := DefaultConfig()
	cfg.QueueAlpha = 2
	cfg.MinQueueLen = 4
	d, _ := newDispatcher(t, cfg)
	s := NewStream(script)
	var out strings.Builder
	running := map[string]string{} // node -> job
	var live []string
	state := map[string]string{} // job -> queued | running | evicted | cancelled
	models := []string{"A", "B", "C"}
	vram := []uint64{8, 16, 24}
	assign := func(as Assignment) {
		if state[as.Job.ID] == "running" {
			t.Fatalf("job %s dispatched twice", as.Job.ID)
		}
		if len(as.Nodes) != as.Job.replicas() {
			t.Fatalf("job %s on %v", as.Job.ID, as.Nodes)
		}
		for _, n := range as.Nodes {
			if j, busy := running[n]; busy {
				t.Fatalf("node %s given %s while running %s", n, as.Job.ID, j)
			}
			running[n] = as.Job.ID
		}
		state[as.Job.ID] = "running"
		fmt.Fprintf(&out, "run %s on %v pre %v\n", as.Job.ID, as.Nodes, as.PreDownload)
	}
	evict := func(ev []Job) {
		for _, j := range ev {
			if state[j.ID] != "queued" {
				t.Fatalf("evicted %s in state %q", j.ID, state[j.ID])
			}
			state[j.ID] = "evicted"
			fmt.Fprintf(&out, "evict %s\n", j.ID)
		}
	}
	for step := range 600 {
		seed := []byte(fmt.Sprint(step))
		switch op := s.Uniform(10); {
		case op < 2 || len(live) == 0:
			id := fmt.Sprintf("n%03d", step)
			n := node(id, models[s.Uniform(3)], vram[s.Uniform(3)])
			n.QoS = float64(1+s.Uniform(10)) / 10
			if s.Uniform(2) == 0 {
				n.LocalModels = []string{"m"}
			}
			as, ok, err := d.Join(n, seed)
			if err != nil {
				t.Fatal(err)
			}
			live = append(live, id)
			if ok {
				assign(as)
			}
		case op < 6:
			j := Job{ID: fmt.Sprintf("j%03d", step), Price: big.NewInt(int64(s.Uniform(1000))), MinVRAM: vram[s.Uniform(3)], Units: s.Uniform(5)}
			if s.Uniform(3) == 0 {
				j.GPUModel = models[s.Uniform(3)]
			}
			if s.Uniform(4) == 0 {
				j.Replicas = 2 + int(s.Uniform(2))
			}
			if s.Uniform(3) == 0 {
				j.Models = []string{"m"}
			}
			state[j.ID] = "queued"
			as, ok, ev, err := d.Submit(j, seed)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				assign(as)
			}
			evict(ev)
		case op < 9:
			id := live[s.Uniform(uint64(len(live)))]
			delete(running, id)
			as, ok, err := d.Release(id, seed)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				if as.Nodes[0] != id {
					t.Fatalf("released %s but job went to %v", id, as.Nodes)
				}
				assign(as)
			}
		default:
			k := s.Uniform(uint64(len(live)))
			id := live[k]
			live = slices.Delete(live, int(k), int(k+1))
			delete(running, id)
			ev, err := d.Leave(id)
			if err != nil {
				t.Fatal(err)
			}
			evict(ev)
		}
		liveN, free, queued := d.Stats()
		if liveN != len(live) {
			t.Fatalf("step %d: live %d, want %d", step, liveN, len(live))
		}
		if free != len(live)-len(running) {
			t.Fatalf("step %d: free %d, want %d", step, free, len(live)-len(running))
		}
		if queued > cfg.queueCap(liveN) {
			t.Fatalf("step %d: %d queued over cap %d", step, queued, cfg.queueCap(liveN))
		}
		var want []string
		for id, st := range state {
			if st == "queued" {
				want = append(want, id)
			}
		}
		got := ids(d.Queued())
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("step %d: queued %v, want %v", step, got, want)
		}
	}
	return out.String()
}

// TestDispatcherReplay: two dispatchers fed the same events make the same
// decisions (map iteration order differs between them), and every
// invariant holds along the way.
func TestDispatcherReplay(t *testing.T) {
	for _, script := range []string{"one", "two", "three"} {
		a := runScript(t, []byte(script))
		b := runScript(t, []byte(script))
		if a != b {
			t.Fatalf("script %s: transcripts differ", script)
		}
		if !strings.Contains(a, "run ") || !strings.Contains(a, "evict ") {
			t.Fatalf("script %s exercised too little:\n%s", script, a)
		}
	}
}
