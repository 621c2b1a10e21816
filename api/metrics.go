package api

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/jobs"
)

// Refusal reasons: the values of jobmesh_api_refusals_total's reason label.
const (
	refusedHost    = "host"         // a Host header that is not allowed
	refusedOrigin  = "origin"       // a foreign Origin, or Sec-Fetch-Site: cross-site
	refusedForm    = "form"         // form content on a state-changing method
	refusedToken   = "token"        // no token, or a wrong one
	refusedCSRF    = "csrf"         // a session's change without its CSRF token
	refusedLogin   = "login"        // a login code that is unknown, used or expired
	refusedStreams = "stream_limit" // an event stream over a limit
)

// newRefusals returns jobmesh_api_refusals_total, registered with reg (or
// the one a handler over the same node registered first), every reason
// at zero.
func newRefusals(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jobmesh_api_refusals_total",
		Help: "API requests refused: by the guard in front of every route (host, origin, form, token, csrf), a bad login code (login), or the event stream limits (stream_limit).",
	}, []string{"reason"})
	if reg != nil {
		err := reg.Register(c)
		if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
				c = existing
			}
		}
	}
	for _, r := range []string{refusedHost, refusedOrigin, refusedForm, refusedToken, refusedCSRF, refusedLogin, refusedStreams} {
		c.WithLabelValues(r)
	}
	return c
}

// collectTimeout bounds deriving the job states for one scrape.
const collectTimeout = 5 * time.Second

// jobStates lists every state, so that each is exported, zeros included.
var jobStates = []apiv1.JobState{
	apiv1.JobUnfunded, apiv1.JobOpen, apiv1.JobRunning, apiv1.JobUndecided,
	apiv1.JobVerified, apiv1.JobSettled, apiv1.JobCancelled, apiv1.JobRefunded,
}

// collector exports, at each scrape, the jobs in the store by the state
// the serving node derives for them, and the open event streams. A job in
// a terminal state stays in it, so its state is remembered and not
// derived (nor read from the chain) again.
type collector struct {
	view    *JobView
	events  *Events
	jobs    *prometheus.Desc
	streams *prometheus.Desc

	mu       sync.Mutex
	terminal map[jobs.ID]apiv1.JobState
}

func newCollector(view *JobView, events *Events) *collector {
	return &collector{
		view:   view,
		events: events,
		jobs: prometheus.NewDesc("jobmesh_api_jobs",
			"Jobs in this node's replicated store, by the state this node derives (with a chain, from the escrow too).",
			[]string{"state"}, nil),
		streams: prometheus.NewDesc("jobmesh_api_event_streams",
			"Open GET /v1/events streams.", nil, nil),
		terminal: map[jobs.ID]apiv1.JobState{},
	}
}

// register adds c to reg. A registry that already has these metrics (a
// second handler over the same node) keeps the first.
func (c *collector) register(reg prometheus.Registerer) error {
	if reg == nil {
		return nil
	}
	err := reg.Register(c)
	if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
		return nil
	}
	return err
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.jobs
	ch <- c.streams
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.streams, prometheus.GaugeValue, float64(c.events.Open()))
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	counts, err := c.count(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.jobs, err)
		return
	}
	for _, s := range jobStates {
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(counts[s]), string(s))
	}
}

func (c *collector) count(ctx context.Context) (map[apiv1.JobState]int, error) {
	stored, err := c.view.jobsInStore(ctx)
	if err != nil {
		return nil, err
	}
	counts := map[apiv1.JobState]int{}
	for _, sj := range stored {
		info, r := sj.info, sj.rec
		id := info.ID()
		c.mu.Lock()
		state, done := c.terminal[id]
		c.mu.Unlock()
		if !done {
			j, err := c.view.summary(ctx, info, r)
			if err != nil {
				return nil, err
			}
			state = j.State
			if state.Terminal() {
				c.mu.Lock()
				c.terminal[id] = state
				c.mu.Unlock()
			}
		}
		counts[state]++
	}
	return counts, nil
}
