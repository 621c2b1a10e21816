package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// ErrTooManyStreams: opening the stream would pass one of the
// EventsConfig stream limits.
var ErrTooManyStreams = errors.New("api: too many event streams")

// ErrInvalidEventsConfig is wrapped by EventsConfig.Validate errors.
var ErrInvalidEventsConfig = errors.New("api: invalid events config")

// EventsConfig configures the GET /v1/events stream.
type EventsConfig struct {
	// MaxStreams caps the concurrent streams; more get 429. Default 64.
	MaxStreams int
	// MaxStreamsPerClient caps one client's streams: a client is the
	// bearer token, a dashboard session, or, without credentials, the
	// remote address (its /64 for IPv6). Default 4.
	MaxStreamsPerClient int
	// MaxAnonymousStreams caps the streams of clients without credentials
	// together, so that they cannot take every stream from the CLI and
	// the signed-in dashboard. Default 32.
	MaxAnonymousStreams int
	// WriteTimeout, when positive, is the write deadline set before each
	// write to a stream: a client that stops reading is cut, an idle one
	// is not. Default 0 (New sets Config.WriteTimeout).
	WriteTimeout time.Duration
	// Heartbeat is how often an idle stream gets a ": ping" comment, so
	// that proxies keep it open. Default 15s.
	Heartbeat time.Duration
	// Coalesce is how long changes to one job are gathered before its
	// summary is derived and sent: a burst of records sends one event.
	// Default 250ms.
	Coalesce time.Duration
	// ChainPoll is how often jobs not yet terminal are derived again so
	// that chain-only changes (funded, settled, refunded) show up; only
	// with a chain. Default 2s.
	ChainPoll time.Duration
	// Retry is the reconnection delay the stream advises (the SSE "retry"
	// field). Default 3s.
	Retry time.Duration
}

// DefaultEventsConfig returns the defaults documented on EventsConfig.
func DefaultEventsConfig() EventsConfig {
	return EventsConfig{
		MaxStreams:          64,
		MaxStreamsPerClient: 4,
		MaxAnonymousStreams: 32,
		Heartbeat:           15 * time.Second,
		Coalesce:            250 * time.Millisecond,
		ChainPoll:           2 * time.Second,
		Retry:               3 * time.Second,
	}
}

// Validate checks the config.
func (c EventsConfig) Validate() error {
	switch {
	case c.MaxStreams < 1:
		return fmt.Errorf("%w: max streams %d < 1", ErrInvalidEventsConfig, c.MaxStreams)
	case c.MaxStreamsPerClient < 1 || c.MaxStreamsPerClient > c.MaxStreams:
		return fmt.Errorf("%w: max streams per client %d outside 1..%d", ErrInvalidEventsConfig, c.MaxStreamsPerClient, c.MaxStreams)
	case c.MaxAnonymousStreams < 0 || c.MaxAnonymousStreams > c.MaxStreams:
		return fmt.Errorf("%w: max anonymous streams %d outside 0..%d", ErrInvalidEventsConfig, c.MaxAnonymousStreams, c.MaxStreams)
	case c.WriteTimeout < 0:
		return fmt.Errorf("%w: negative write timeout", ErrInvalidEventsConfig)
	case c.Heartbeat <= 0, c.Coalesce <= 0, c.ChainPoll <= 0, c.Retry <= 0:
		return fmt.Errorf("%w: heartbeat, coalesce, chain poll and retry must be positive", ErrInvalidEventsConfig)
	}
	return nil
}

// Events serves GET /v1/events: a server-sent-events stream of job
// summaries. One hub per Events watches the store's jobs while at least
// one stream is open and fans each changed summary out to the streams;
// it stops when the last stream ends, so an idle Events holds nothing.
type Events struct {
	view *JobView
	cfg  EventsConfig
	log  *slog.Logger
	// refused, when set, counts streams refused by a limit.
	refused func()

	mu        sync.Mutex // guards the counts, hub and every hub's streams
	open      int
	anonymous int
	byClient  map[string]int
	hub       *hub // nil while no stream is open
}

// NewEvents returns the events handler over view. log may be nil.
func NewEvents(view *JobView, cfg EventsConfig, log *slog.Logger) (*Events, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if view == nil || view.Store == nil {
		return nil, fmt.Errorf("%w: a job view over a store is required", ErrInvalidEventsConfig)
	}
	if log == nil {
		log = slog.Default()
	}
	return &Events{view: view, cfg: cfg, log: log.With("subsystem", "api-events"), byClient: map[string]int{}}, nil
}

// stream is one open GET /v1/events. The hub never blocks on it: it keeps
// the newest unsent event per job, so a slow client skips intermediate
// summaries but never misses a job's latest one.
type stream struct {
	only    string // job ID to follow; "" = every job
	client  principal
	hub     *hub
	mu      sync.Mutex
	pending map[string][]byte // job ID → encoded apiv1.Event
	order   []string          // pending job IDs, oldest first
	wake    chan struct{}     // capacity 1
	ended   chan struct{}     // closed when the hub stops (store closed)
}

func (s *stream) push(id string, data []byte) {
	if s.only != "" && s.only != id {
		return
	}
	s.mu.Lock()
	if _, ok := s.pending[id]; !ok {
		s.order = append(s.order, id)
	}
	s.pending[id] = data
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *stream) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.ended:
	default:
		close(s.ended)
	}
}

func (s *stream) drain() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.pending[id])
	}
	s.order, s.pending = nil, map[string][]byte{}
	return out
}

func (e *Events) subscribe(only string, client principal) (*stream, error) {
	s := &stream{only: only, client: client, pending: map[string][]byte{}, wake: make(chan struct{}, 1), ended: make(chan struct{})}
	e.mu.Lock()
	if err := e.admit(client); err != nil {
		e.mu.Unlock()
		return nil, err
	}
	e.open++
	e.byClient[client.key]++
	if client.anonymous() {
		e.anonymous++
	}
	if e.hub == nil {
		e.hub = startHub(e)
	}
	h := e.hub
	s.hub = h
	h.streams[s] = struct{}{}
	e.mu.Unlock()
	// The hub sends the new stream its initial events from its own loop,
	// so they cannot overtake a later change. A hub that already stopped
	// (the store closed) sends nothing more.
	select {
	case h.joins <- s:
	case <-h.done:
		s.end()
	}
	return s, nil
}

// admit checks the stream limits for one more stream of client; e.mu is
// held.
func (e *Events) admit(client principal) error {
	switch {
	case e.open >= e.cfg.MaxStreams:
		return fmt.Errorf("%w: %d open, the most this node serves", ErrTooManyStreams, e.open)
	case e.byClient[client.key] >= e.cfg.MaxStreamsPerClient:
		return fmt.Errorf("%w: this client has %d open, the most one client may", ErrTooManyStreams, e.byClient[client.key])
	case client.anonymous() && e.anonymous >= e.cfg.MaxAnonymousStreams:
		return fmt.Errorf("%w: %d open without credentials, the most this node serves (send the API token)", ErrTooManyStreams, e.anonymous)
	}
	return nil
}

// unsubscribe removes s; the last stream of a hub stops it. The hub is
// not waited for: a stopping hub's stream set is empty, so it sends
// nothing more.
func (e *Events) unsubscribe(s *stream) {
	e.mu.Lock()
	defer e.mu.Unlock()
	h := s.hub
	if _, ok := h.streams[s]; !ok {
		return
	}
	delete(h.streams, s)
	e.open--
	if e.byClient[s.client.key]--; e.byClient[s.client.key] <= 0 {
		delete(e.byClient, s.client.key)
	}
	if s.client.anonymous() {
		e.anonymous--
	}
	if len(h.streams) == 0 {
		h.cancel()
		if e.hub == h {
			e.hub = nil
		}
	}
}

// Open returns the number of open streams.
func (e *Events) Open() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.open
}

// ServeHTTP streams job events until the client goes away, the request's
// context ends (the server shuts down) or the node's store closes.
func (e *Events) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	only := ""
	if q := r.URL.Query(); q.Has("job") {
		id, err := jobs.ParseHash(q.Get("job"))
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("job ID: %w", err))
			return
		}
		only = id.String()
	}
	rc := http.NewResponseController(w)
	s, err := e.subscribe(only, principalOf(r))
	if err != nil {
		if e.refused != nil {
			e.refused()
		}
		w.Header().Set("Retry-After", fmt.Sprint(int(e.cfg.Retry.Seconds()+0.5)))
		writeError(w, http.StatusTooManyRequests, err)
		return
	}
	defer e.unsubscribe(s)
	// The server's ReadTimeout does not end a stream (net/http clears the
	// read deadline once a bodiless request is read), but its
	// WriteTimeout would: each write gets its own deadline instead. The
	// call fails only where the writer has no connection to set it on.
	write := func(s string) error {
		if e.cfg.WriteTimeout > 0 {
			_ = rc.SetWriteDeadline(time.Now().Add(e.cfg.WriteTimeout))
		}
		if _, err := io.WriteString(w, s); err != nil {
			return err
		}
		return rc.Flush()
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	if e.cfg.WriteTimeout > 0 {
		_ = rc.SetWriteDeadline(time.Now().Add(e.cfg.WriteTimeout))
	}
	w.WriteHeader(http.StatusOK)
	if err := write(fmt.Sprintf("retry: %d\n\n", e.cfg.Retry.Milliseconds())); err != nil {
		return
	}
	beat := time.NewTicker(e.cfg.Heartbeat)
	defer beat.Stop()
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case <-s.ended:
			return
		case <-beat.C:
			err = write(": ping\n\n")
		case <-s.wake:
			var b strings.Builder
			for _, data := range s.drain() {
				b.WriteString("event: job\ndata: ")
				b.Write(data)
				b.WriteString("\n\n")
			}
			err = write(b.String())
		}
		if err != nil {
			return
		}
	}
}

// hub watches the store's jobs for the open streams.
type hub struct {
	e       *Events
	joins   chan *stream
	streams map[*stream]struct{} // guarded by e.mu
	cancel  context.CancelFunc
	done    chan struct{}

	last map[string][]byte // job ID → last encoded event sent
	live map[string]bool   // job IDs whose last state is not terminal
}

func startHub(e *Events) *hub {
	ctx, cancel := context.WithCancel(context.Background())
	h := &hub{
		e: e, joins: make(chan *stream), streams: map[*stream]struct{}{}, cancel: cancel, done: make(chan struct{}),
		last: map[string][]byte{}, live: map[string]bool{},
	}
	// Watch before the first snapshot, so that no change falls between.
	changes := e.view.Store.Watch(ctx, records.JobsPrefix)
	go h.run(ctx, changes)
	return h
}

func (h *hub) run(ctx context.Context, changes <-chan crdt.Change) {
	defer close(h.done)
	var poll <-chan time.Time
	if h.e.view.Chain != nil {
		t := time.NewTicker(h.e.cfg.ChainPoll)
		defer t.Stop()
		poll = t.C
	}
	coalesce := time.NewTimer(h.e.cfg.Coalesce)
	coalesce.Stop()
	armed := false
	dirty := map[jobs.ID]bool{}
	for {
		select {
		case <-ctx.Done():
			return
		case s := <-h.joins:
			h.snapshot(ctx, s)
		case c, ok := <-changes:
			if !ok {
				if ctx.Err() == nil {
					// The store closed: the node is shutting down.
					h.endStreams()
				}
				return
			}
			if c.Kind == crdt.ChangeOverflow {
				// Changes were dropped: derive every job again.
				h.resync(ctx)
				continue
			}
			if id, ok := records.JobOf(c.Key); ok {
				dirty[id] = true
			}
			if !armed {
				coalesce.Reset(h.e.cfg.Coalesce)
				armed = true
			}
		case <-coalesce.C:
			armed = false
			for id := range dirty {
				h.derive(ctx, id)
			}
			clear(dirty)
		case <-poll:
			for id := range h.live {
				if jid, err := jobs.ParseHash(id); err == nil {
					h.derive(ctx, jid)
				}
			}
		}
	}
}

// endStreams tells every stream that no more events will come.
func (h *hub) endStreams() {
	h.e.mu.Lock()
	defer h.e.mu.Unlock()
	for s := range h.streams {
		s.end()
	}
}

// snapshot sends a new stream the current summary of every job it follows.
func (h *hub) snapshot(ctx context.Context, s *stream) {
	if s.only != "" {
		id, _ := jobs.ParseHash(s.only)
		h.derive(ctx, id)
		if data, ok := h.last[s.only]; ok {
			s.push(s.only, data)
		}
		return
	}
	h.resync(ctx)
	for id, data := range h.last {
		s.push(id, data)
	}
}

// resync derives every job in the store.
func (h *hub) resync(ctx context.Context) {
	js, err := h.e.view.List(ctx)
	if err != nil {
		h.e.log.Warn("listing jobs for the event streams", "err", err)
		return
	}
	// Oldest first, so that a client sees jobs in the order they changed.
	for i := len(js) - 1; i >= 0; i-- {
		h.publish(js[i])
	}
}

// derive recomputes one job's summary and publishes it if it changed.
func (h *hub) derive(ctx context.Context, id jobs.ID) {
	j, err := h.e.view.Summary(ctx, id)
	if errors.Is(err, ErrNoSuchJob) {
		return
	}
	if err != nil {
		h.e.log.Warn("deriving a job summary for the event streams", "job", id, "err", err)
		return
	}
	h.publish(j)
}

func (h *hub) publish(j apiv1.Job) {
	data, err := json.Marshal(apiv1.Event{Kind: "job", Job: j})
	if err != nil {
		h.e.log.Error("encoding a job event", "job", j.ID, "err", err)
		return
	}
	if string(h.last[j.ID]) == string(data) {
		return
	}
	h.last[j.ID] = data
	if j.State.Terminal() {
		delete(h.live, j.ID)
	} else {
		h.live[j.ID] = true
	}
	h.e.mu.Lock()
	defer h.e.mu.Unlock()
	for s := range h.streams {
		s.push(j.ID, data)
	}
}
