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
	r := &replay{t: t, d: d, s: NewStream(script), running: map[string]string{}, state: map[string]string{}}
	for step := range 600 {
		seed := []byte(fmt.Sprint(step))
		switch op := r.s.Uniform(10); {
		case op < 2 || len(r.live) == 0:
			r.join(step, seed)
		case op < 6:
			r.submit(step, seed)
		case op < 9:
			r.release(seed)
		default:
			r.leave()
		}
		r.check(step, cfg)
	}
	return r.out.String()
}

// replay is the state of one runScript: the dispatcher, the script's
// stream of choices, and the model of what the dispatcher should hold.
type replay struct {
	t       *testing.T
	d       *Dispatcher
	s       *Stream
	out     strings.Builder
	running map[string]string // node -> job
	live    []string
	state   map[string]string // job -> queued | running | evicted | cancelled
}

var (
	replayModels = []string{"A", "B", "C"}
	replayVRAM   = []uint64{8, 16, 24}
)

func (r *replay) assign(as Assignment) {
	t := r.t
	if r.state[as.Job.ID] == "running" {
		t.Fatalf("job %s dispatched twice", as.Job.ID)
	}
	if len(as.Nodes) != as.Job.replicas() {
		t.Fatalf("job %s on %v", as.Job.ID, as.Nodes)
	}
	for _, n := range as.Nodes {
		if j, busy := r.running[n]; busy {
			t.Fatalf("node %s given %s while running %s", n, as.Job.ID, j)
		}
		r.running[n] = as.Job.ID
	}
	r.state[as.Job.ID] = "running"
	fmt.Fprintf(&r.out, "run %s on %v pre %v\n", as.Job.ID, as.Nodes, as.PreDownload)
}

func (r *replay) evict(ev []Job) {
	for _, j := range ev {
		if r.state[j.ID] != "queued" {
			r.t.Fatalf("evicted %s in state %q", j.ID, r.state[j.ID])
		}
		r.state[j.ID] = "evicted"
		fmt.Fprintf(&r.out, "evict %s\n", j.ID)
	}
}

// join adds a node drawn from the script.
func (r *replay) join(step int, seed []byte) {
	s := r.s
	id := fmt.Sprintf("n%03d", step)
	n := node(id, replayModels[s.Uniform(3)], replayVRAM[s.Uniform(3)])
	n.QoS = float64(1+s.Uniform(10)) / 10
	if s.Uniform(2) == 0 {
		n.LocalModels = []string{"m"}
	}
	as, ok, err := r.d.Join(n, seed)
	if err != nil {
		r.t.Fatal(err)
	}
	r.live = append(r.live, id)
	if ok {
		r.assign(as)
	}
}

// submit submits a job drawn from the script.
func (r *replay) submit(step int, seed []byte) {
	s := r.s
	j := Job{ID: fmt.Sprintf("j%03d", step), Price: big.NewInt(int64(s.Uniform(1000))), MinVRAM: replayVRAM[s.Uniform(3)], Units: s.Uniform(5)}
	if s.Uniform(3) == 0 {
		j.GPUModel = replayModels[s.Uniform(3)]
	}
	if s.Uniform(4) == 0 {
		j.Replicas = 2 + int(s.Uniform(2))
	}
	if s.Uniform(3) == 0 {
		j.Models = []string{"m"}
	}
	r.state[j.ID] = "queued"
	as, ok, ev, err := r.d.Submit(j, seed)
	if err != nil {
		r.t.Fatal(err)
	}
	if ok {
		r.assign(as)
	}
	r.evict(ev)
}

// release frees a live node drawn from the script.
func (r *replay) release(seed []byte) {
	id := r.live[r.s.Uniform(uint64(len(r.live)))]
	delete(r.running, id)
	as, ok, err := r.d.Release(id, seed)
	if err != nil {
		r.t.Fatal(err)
	}
	if ok {
		if as.Nodes[0] != id {
			r.t.Fatalf("released %s but job went to %v", id, as.Nodes)
		}
		r.assign(as)
	}
}

// leave removes a live node drawn from the script.
func (r *replay) leave() {
	k := r.s.Uniform(uint64(len(r.live)))
	id := r.live[k]
	r.live = slices.Delete(r.live, int(k), int(k+1))
	delete(r.running, id)
	ev, err := r.d.Leave(id)
	if err != nil {
		r.t.Fatal(err)
	}
	r.evict(ev)
}

// check compares the dispatcher's counts and queue with the model.
func (r *replay) check(step int, cfg Config) {
	t := r.t
	liveN, free, queued := r.d.Stats()
	if liveN != len(r.live) {
		t.Fatalf("step %d: live %d, want %d", step, liveN, len(r.live))
	}
	if free != len(r.live)-len(r.running) {
		t.Fatalf("step %d: free %d, want %d", step, free, len(r.live)-len(r.running))
	}
	if queued > cfg.queueCap(liveN) {
		t.Fatalf("step %d: %d queued over cap %d", step, queued, cfg.queueCap(liveN))
	}
	var want []string
	for id, st := range r.state {
		if st == "queued" {
			want = append(want, id)
		}
	}
	got := ids(r.d.Queued())
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("step %d: queued %v, want %v", step, got, want)
	}
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
