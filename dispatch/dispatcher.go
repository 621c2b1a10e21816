package dispatch

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Params configures a Dispatcher.
type Params struct {
	// Config holds the network parameters; required (start from
	// DefaultConfig()), checked with Validate.
	Config Config
	// Logger receives decisions at debug level and evictions at info;
	// default: discard.
	Logger *slog.Logger
	// Registerer receives the dispatcher's metrics; default: none.
	Registerer prometheus.Registerer
}

// Assignment is a job handed to processors.
type Assignment struct {
	// Job is the dispatched job.
	Job Job
	// Nodes are the processors that run it (Replicas of them).
	Nodes []string
	// PreDownload lists model pre-download requests (seed 001: checked
	// every time a job starts).
	PreDownload []PreDownload
}

// Dispatcher joins the processor Pool and the job Queue into the dispatch
// state machine of seeds 000/001: a submitted job goes at once to free
// eligible processors or waits in the queue; a processor that becomes free
// takes the best queued job it can serve. Each method is one deterministic
// transition given the caller's seed, so nodes replaying the same events in
// the same order hold the same state. Safe for concurrent use; it owns no
// goroutines and needs no Close.
type Dispatcher struct {
	mu    sync.Mutex
	cfg   Config
	pool  *Pool
	queue *Queue
	log   *slog.Logger
	m     *metrics
}

type metrics struct {
	dispatched *prometheus.CounterVec
	queued     prometheus.Counter
	evicted    prometheus.Counter
	queueLen   prometheus.Gauge
	live       prometheus.Gauge
	free       prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		dispatched: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "jobmesh", Subsystem: "dispatch", Name: "jobs_dispatched_total", Help: "Jobs handed to processors, by path (submit: at once; release: from the queue)."}, []string{"path"}),
		queued:     prometheus.NewCounter(prometheus.CounterOpts{Namespace: "jobmesh", Subsystem: "dispatch", Name: "jobs_queued_total", Help: "Jobs that found no free processor and were queued."}),
		evicted:    prometheus.NewCounter(prometheus.CounterOpts{Namespace: "jobmesh", Subsystem: "dispatch", Name: "jobs_evicted_total", Help: "Lowest-value jobs evicted because the queue exceeded alpha*N."}),
		queueLen:   prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "jobmesh", Subsystem: "dispatch", Name: "queue_length", Help: "Jobs waiting in the queue."}),
		live:       prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "jobmesh", Subsystem: "dispatch", Name: "live_processors", Help: "Live processors in the pool."}),
		free:       prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "jobmesh", Subsystem: "dispatch", Name: "free_processors", Help: "Free processors in the pool."}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.dispatched, m.queued, m.evicted, m.queueLen, m.live, m.free} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("dispatch: register metrics: %w", err)
			}
		}
	}
	return m, nil
}

// New returns an empty Dispatcher.
func New(p Params) (*Dispatcher, error) {
	if err := p.Config.Validate(); err != nil {
		return nil, err
	}
	pool, _ := NewPool(p.Config)
	queue, _ := NewQueue(p.Config)
	log := p.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m, err := newMetrics(p.Registerer)
	if err != nil {
		return nil, err
	}
	return &Dispatcher{cfg: p.Config, pool: pool, queue: queue, log: log, m: m}, nil
}

func (d *Dispatcher) gauges() {
	d.m.queueLen.Set(float64(d.queue.Len()))
	d.m.live.Set(float64(d.pool.Len()))
	d.m.free.Set(float64(d.pool.FreeLen()))
}

// Join adds a live processor and, as it is free, offers it the queue (seed
// 001: a new node joining makes a node available).
func (d *Dispatcher) Join(n Node, seed []byte) (Assignment, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.pool.Add(n, false); err != nil {
		return Assignment{}, false, err
	}
	return d.release(n.ID, seed)
}

// Update replaces a processor's advertisement (models, stake, QoS).
func (d *Dispatcher) Update(n Node) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pool.Update(n)
}

// Leave removes a processor. N shrinks, so the queue cap may too: the jobs
// evicted by that are returned for the caller to abort.
func (d *Dispatcher) Leave(id string) ([]Job, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.pool.Remove(id); err != nil {
		return nil, err
	}
	ev := d.trim()
	d.gauges()
	return ev, nil
}

// Release marks a processor free (its job finished, or it resumed) and gives
// it the best queued job it can serve, with companions for a replicated job
// drawn from seed. ok is false when nothing in the queue fits; the processor
// then stays free.
func (d *Dispatcher) Release(id string, seed []byte) (Assignment, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.release(id, seed)
}

func (d *Dispatcher) release(id string, seed []byte) (Assignment, bool, error) {
	defer d.gauges()
	e, ok := d.pool.nodes[id]
	if !ok {
		return Assignment{}, false, fmt.Errorf("%w: %s", ErrUnknownNode, id)
	}
	d.pool.setFree(e, true)
	canGroup := func(model string, vram uint64, r int) bool { return d.pool.freeOfModel(model, vram) >= r }
	job, ok := d.queue.Best(e.node, canGroup)
	if !ok {
		return Assignment{}, false, nil
	}
	others, err := d.pool.companions(job, e, seed)
	if errors.Is(err, ErrNoCandidates) {
		// Enough free processors of the model exist but too few weigh more
		// than 0 (no stake or no QoS): the job stays queued and nothing else
		// is tried, so the outcome stays a plain function of the state.
		return Assignment{}, false, nil
	}
	if err != nil {
		return Assignment{}, false, err
	}
	d.queue.Remove(job.ID)
	nodes := append([]string{id}, others...)
	for _, n := range nodes {
		d.pool.setFree(d.pool.nodes[n], false)
	}
	pre := d.pool.preDownload(uniq(job.Models), d.pool.eligibleGroups(job), seed)
	d.m.dispatched.WithLabelValues("release").Inc()
	d.log.Debug("dispatched from queue", "job", job.ID, "nodes", nodes)
	return Assignment{Job: job, Nodes: nodes, PreDownload: pre}, true, nil
}

// Submit dispatches a new job at once to free eligible processors drawn
// from seed (seed 001: regardless of the queue), or queues it. When the
// queue then exceeds α·N the lowest-value jobs (possibly this one) are
// evicted and returned for the caller to abort.
func (d *Dispatcher) Submit(job Job, seed []byte) (Assignment, bool, []Job, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	defer d.gauges()
	if d.queue.Has(job.ID) {
		return Assignment{}, false, nil, fmt.Errorf("%w: job %s already queued", ErrDuplicate, job.ID)
	}
	sel, err := d.pool.Select(job, seed)
	switch {
	case err == nil:
		for _, n := range sel.Nodes {
			d.pool.setFree(d.pool.nodes[n], false)
		}
		d.m.dispatched.WithLabelValues("submit").Inc()
		d.log.Debug("dispatched at once", "job", job.ID, "nodes", sel.Nodes, "candidates", sel.Candidates)
		return Assignment{Job: job, Nodes: sel.Nodes, PreDownload: sel.PreDownload}, true, nil, nil
	case !errors.Is(err, ErrNoCandidates):
		return Assignment{}, false, nil, err
	}
	if err := d.queue.Push(job); err != nil {
		return Assignment{}, false, nil, err
	}
	d.m.queued.Inc()
	return Assignment{}, false, d.trim(), nil
}

func (d *Dispatcher) trim() []Job {
	ev := d.queue.Trim(d.pool.Len())
	for _, j := range ev {
		d.m.evicted.Inc()
		d.log.Info("queue full: job evicted", "job", j.ID, "cap", d.queue.Cap(d.pool.Len()))
	}
	return ev
}

// Cancel removes a queued job (its creator cancelled or it expired).
func (d *Dispatcher) Cancel(jobID string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.queue.Remove(jobID)
	d.gauges()
	return ok
}

// Queued lists the queued jobs in queue order.
func (d *Dispatcher) Queued() []Job {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.queue.Jobs()
}

// Stats returns the number of live processors, free processors and queued
// jobs.
func (d *Dispatcher) Stats() (live, free, queued int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pool.Len(), d.pool.FreeLen(), d.queue.Len()
}
