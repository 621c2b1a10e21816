package dispatch

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func newDispatcher(t testing.TB, cfg Config) (*Dispatcher, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	d, err := New(Params{Config: cfg, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	return d, reg
}

func metricValue(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	switch {
	case out.Counter != nil:
		return out.Counter.GetValue()
	case out.Gauge != nil:
		return out.Gauge.GetValue()
	}
	t.Fatal("not a counter or gauge")
	return 0
}

func TestDispatcherSubmitAndRelease(t *testing.T) {
	d, _ := newDispatcher(t, DefaultConfig())
	for _, n := range []Node{node("a", "4090", 24), node("b", "3080", 10)} {
		if _, ok, err := d.Join(n, []byte(n.ID)); err != nil || ok {
			t.Fatalf("join %s: %v %v", n.ID, ok, err)
		}
	}
	// Dispatched at once to the only eligible free processor.
	as, ok, ev, err := d.Submit(Job{ID: "big", Price: big.NewInt(10), MinVRAM: 16}, []byte("big"))
	if err != nil || !ok || len(ev) != 0 || !slices.Equal(as.Nodes, []string{"a"}) {
		t.Fatalf("submit big: %+v %v %v %v", as, ok, ev, err)
	}
	// No free 16 GiB processor now: queued, even though b is free.
	for _, j := range []Job{
		{ID: "big2", Price: big.NewInt(5), MinVRAM: 16},
		{ID: "big3", Price: big.NewInt(50), MinVRAM: 16},
		{ID: "only4090", Price: big.NewInt(20), GPUModel: "4090"},
	} {
		if _, ok, _, err := d.Submit(j, []byte(j.ID)); err != nil || ok {
			t.Fatalf("submit %s: %v %v", j.ID, ok, err)
		}
	}
	if _, _, _, err := d.Submit(Job{ID: "big2", Price: big.NewInt(5)}, nil); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("duplicate submit: %v", err)
	}
	// A small job still goes at once to b.
	as, ok, _, _ = d.Submit(Job{ID: "small", Price: big.NewInt(1), MinVRAM: 8}, []byte("small"))
	if !ok || as.Nodes[0] != "b" {
		t.Fatalf("small: %+v %v", as, ok)
	}
	// b is freed: it can serve none of the queued jobs.
	if _, ok, err := d.Release("b", []byte("r1")); err != nil || ok {
		t.Fatalf("release b: %v %v", ok, err)
	}
	// a is freed: it takes the best it can serve, then the next, then the
	// next, in value order.
	var got []string
	for i := range 4 {
		as, ok, err := d.Release("a", []byte(fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			got = append(got, as.Job.ID)
		}
	}
	if !slices.Equal(got, []string{"big3", "only4090", "big2"}) {
		t.Fatalf("dequeued %v", got)
	}
	if _, _, err := d.Release("nobody", nil); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("unknown release: %v", err)
	}
}

func TestDispatcherEvictionReported(t *testing.T) {
	cfg := DefaultConfig()
	cfg.QueueAlpha = 1
	cfg.MinQueueLen = 1
	d, reg := newDispatcher(t, cfg)
	for i := range 3 {
		n := node(fmt.Sprintf("n%d", i), "x", 8)
		if _, _, err := d.Join(n, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Occupy every processor.
	for i := range 3 {
		if _, ok, _, _ := d.Submit(Job{ID: fmt.Sprintf("run%d", i), Price: big.NewInt(1000)}, []byte{byte(i)}); !ok {
			t.Fatal("expected immediate dispatch")
		}
	}
	// Cap is α·N = 3.
	var evicted []string
	for i, price := range []int64{50, 10, 30, 40, 20} {
		_, ok, ev, err := d.Submit(Job{ID: fmt.Sprintf("q%d", i), Price: big.NewInt(price)}, nil)
		if err != nil || ok {
			t.Fatalf("q%d: %v %v", i, ok, err)
		}
		evicted = append(evicted, ids(ev)...)
	}
	if !slices.Equal(evicted, []string{"q1", "q4"}) {
		t.Fatalf("evicted %v, want the two cheapest", evicted)
	}
	// A processor leaves: cap 2, the cheapest left is evicted.
	ev, err := d.Leave("n0")
	if err != nil || !slices.Equal(ids(ev), []string{"q2"}) {
		t.Fatalf("leave: %v %v", ids(ev), err)
	}
	if got := ids(d.Queued()); !slices.Equal(got, []string{"q0", "q3"}) {
		t.Fatalf("queued %v", got)
	}
	if v := metricValue(t, d.m.evicted); v != 3 {
		t.Fatalf("evicted metric %v", v)
	}
	if v := metricValue(t, d.m.queueLen); v != 2 {
		t.Fatalf("queue length metric %v", v)
	}
	if mfs, err := reg.Gather(); err != nil || len(mfs) != 6 {
		t.Fatalf("gather: %d families, %v", len(mfs), err)
	}
	if !d.Cancel("q3") || d.Cancel("q3") {
		t.Fatal("cancel")
	}
	if live, free, queued := d.Stats(); live != 2 || free != 0 || queued != 1 {
		t.Fatalf("stats %d %d %d", live, free, queued)
	}
}

// TestDispatcherGroupJob follows seed 000: a replicated job waits until a
// newly free processor completes a set of R free processors of its card
// model, and the companions are drawn among those.
func TestDispatcherGroupJob(t *testing.T) {
	d, _ := newDispatcher(t, DefaultConfig())
	for _, n := range []Node{node("a1", "A", 24), node("a2", "A", 24), node("b1", "B", 24), node("a3", "A", 16)} {
		if _, _, err := d.Join(n, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Busy a1 so that only two A processors are free.
	if _, ok, _, _ := d.Submit(Job{ID: "solo", Price: big.NewInt(1), GPUModel: "A", MinVRAM: 24}, []byte("x")); !ok {
		t.Fatal("solo not dispatched")
	}
	job := Job{ID: "gpt", Price: big.NewInt(100), MinVRAM: 16, Replicas: 3}
	if _, ok, _, err := d.Submit(job, []byte("gpt")); err != nil || ok {
		t.Fatalf("group job should queue: %v %v", ok, err)
	}
	// b1 frees: its model has one free processor, not three.
	if _, ok, _ := d.Release("b1", nil); ok {
		t.Fatal("b1 cannot complete a group of A")
	}
	// Whichever A processor was busy frees: three A processors are free.
	var busy string
	for _, id := range []string{"a1", "a2", "a3"} {
		if _, free, _ := d.pool.Node(id); !free {
			busy = id
		}
	}
	as, ok, err := d.Release(busy, []byte("g"))
	if err != nil || !ok || as.Job.ID != "gpt" {
		t.Fatalf("release %s: %+v %v %v", busy, as, ok, err)
	}
	got := slices.Clone(as.Nodes)
	slices.Sort(got)
	if as.Nodes[0] != busy || !slices.Equal(got, []string{"a1", "a2", "a3"}) {
		t.Fatalf("group nodes %v", as.Nodes)
	}
	if _, free, _ := d.Stats(); free != 1 {
		t.Fatalf("free %d, want only b1", free)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	cfg := DefaultConfig()
	cfg.QueueAlpha = 0
	if _, err := New(Params{Config: cfg}); !errors.Is(err, ErrConfig) {
		t.Fatalf("got %v", err)
	}
	if _, err := New(Params{}); !errors.Is(err, ErrConfig) {
		t.Fatalf("zero config: %v", err)
	}
	reg := prometheus.NewRegistry()
	if _, err := New(Params{Config: DefaultConfig(), Registerer: reg}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Params{Config: DefaultConfig(), Registerer: reg}); err == nil {
		t.Fatal("registering twice must fail")
	}
}

func TestConfigValidate(t *testing.T) {
	for name, mut := range map[string]func(*Config){
		"negative overhead":    func(c *Config) { c.TaskOverhead = -1 },
		"zero time":            func(c *Config) { c.TaskOverhead, c.UnitTime = 0, 0 },
		"nan alpha":            func(c *Config) { c.QueueAlpha = 0 / func() float64 { return 0 }() },
		"no min queue":         func(c *Config) { c.MinQueueLen = 0 },
		"replicas":             func(c *Config) { c.MaxReplicas = 0 },
		"increasing scores":    func(c *Config) { c.RoundScores = []uint32{1, 2} },
		"no round scores":      func(c *Config) { c.RoundScores = nil },
		"kick timeouts":        func(c *Config) { c.KickTimeouts = 4 },
		"zero qos weights":     func(c *Config) { c.SpeedWeight, c.VRAMWeight, c.TimeoutWeight = 0, 0, 0 },
		"zero score window":    func(c *Config) { c.ScoreWindow = 0 },
		"zero low streak":      func(c *Config) { c.KickLowStreak = 0 },
		"negative min timeout": func(c *Config) { c.MinTimeout = -1 },
	} {
		cfg := DefaultConfig()
		mut(&cfg)
		if err := cfg.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: got %v", name, err)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestDispatcherReleaseAsksForPreDownload(t *testing.T) {
	d, _ := newDispatcher(t, DefaultConfig())
	for _, id := range []string{"a", "b", "c", "d"} {
		if _, _, err := d.Join(node(id, "x", 8), nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		if _, ok, _, _ := d.Submit(Job{ID: fmt.Sprint("busy", i), Price: big.NewInt(1)}, []byte{byte(i)}); !ok {
			t.Fatal("not dispatched")
		}
	}
	job := Job{ID: "needs-model", Price: big.NewInt(5), Models: []string{"llm"}}
	if _, ok, _, _ := d.Submit(job, nil); ok {
		t.Fatal("should queue")
	}
	as, ok, err := d.Release("c", []byte("r"))
	if err != nil || !ok || as.Job.ID != job.ID {
		t.Fatalf("release: %+v %v %v", as, ok, err)
	}
	if len(as.PreDownload) != 1 || as.PreDownload[0].Model != "llm" || len(as.PreDownload[0].Nodes) != 3 {
		t.Fatalf("pre-download %+v", as.PreDownload)
	}
}
