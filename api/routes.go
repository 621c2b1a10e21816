package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/ui"
)

// maxBody bounds the body of a request other than an upload, above what
// any of them takes (POST /v1/jobs: MaxSubmitBody), so that a handler still
// tells a body too large for it with its own error.
const maxBody = 2 * MaxSubmitBody

// register adds every route of the API. Reads of what the mesh already
// shares (the node's identity, peers, processors, jobs, their events and
// outputs, metrics) are open to loopback clients; everything that changes
// state needs the token or a dashboard session, whatever level a route
// names (the guard raises it).
func (h *Handler) register(d Deps) error {
	h.handle("GET /v1/id", accessLocal, func(w http.ResponseWriter, r *http.Request) {
		id := ID{PeerID: d.Host.ID().String(), Role: d.Role, Version: d.Version, Addrs: []string{}}
		if d.Escrow != nil {
			id.Escrow = strings.ToLower(d.Escrow.Address().Hex())
		}
		for _, a := range d.Host.FullAddrs() {
			id.Addrs = append(id.Addrs, a.String())
		}
		writeJSON(w, http.StatusOK, id)
	})
	h.handle("GET /v1/peers", accessLocal, func(w http.ResponseWriter, r *http.Request) {
		peers := []Peer{}
		for _, p := range d.Host.Peers() {
			pi := Peer{PeerID: p.String(), Addrs: []string{}}
			for _, c := range d.Host.Network().ConnsToPeer(p) {
				pi.Addrs = append(pi.Addrs, c.RemoteMultiaddr().String())
			}
			peers = append(peers, pi)
		}
		writeJSON(w, http.StatusOK, peers)
	})
	h.handle("GET /v1/nodes", accessLocal, func(w http.ResponseWriter, r *http.Request) {
		ads, err := d.Mesh.Processors(r.Context())
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		writeJSON(w, http.StatusOK, ads)
	})
	h.handle("GET /v1/operator", accessLocal, func(w http.ResponseWriter, r *http.Request) {
		if d.Operator == nil {
			writeError(w, http.StatusNotImplemented, errors.New("api: this node reports no operator view"))
			return
		}
		op, err := d.Operator(r.Context())
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		writeJSON(w, http.StatusOK, op)
	})
	registerDispatch(h, d.Mesh)
	view := &JobView{Store: d.Store, Chain: d.Escrow, Blocks: d.IPFS, Log: d.Log.With("subsystem", "api"), FailReports: d.FailReports, Holds: d.Holds}
	if d.DApp != nil {
		view.Mine = d.DApp.Submitted
	}
	h.registerJobs(view)
	// Job events, outputs and the dashboard.
	events, err := NewEvents(view, h.cfg.events(), d.Log)
	if err != nil {
		return err
	}
	events.refused = func() { h.refusals.WithLabelValues(refusedStreams).Inc() }
	h.handle("GET /v1/events", accessLocal, events.ServeHTTP)
	if err := newCollector(view, events).register(d.Metrics); err != nil {
		d.Log.Warn("job metrics not registered", "err", err)
	}
	outputs := &Outputs{Store: d.Store, Blocks: d.IPFS, Summarized: view.summarized}
	h.handle("GET /v1/jobs/{id}/output", accessLocal, outputs.ServeOutput)
	h.handle("GET /v1/jobs/{id}/tiles.png", accessLocal, outputs.ServeTiles)
	dashboard := ui.Handler()
	h.handle("GET /ui/{file...}", accessPublic, dashboard.ServeHTTP)
	h.handle("GET /ui", accessPublic, dashboard.ServeHTTP)

	// The submitting side: uploads, submission, cancellation.
	sub := &submitter{client: d.DApp, role: d.Role, view: view, maxUpload: h.cfg.MaxUploadMiB << 20}
	h.handle("POST /v1/content", accessAuth, h.upload(sub.content))
	h.handle("POST /v1/jobs", accessAuth, limitBody(sub.submit))
	h.handle("POST /v1/jobs/plan", accessAuth, limitBody(sub.plan))
	h.handle("POST /v1/jobs/{id}/cancel", accessAuth, limitBody(sub.cancel))
	// Credentials: dashboard sessions from one-time codes.
	h.handle("POST /v1/login", accessToken, limitBody(h.login))
	h.handle("POST /v1/session", accessLogin, limitBody(h.startSession))
	h.handle("DELETE /v1/session", accessAuth, limitBody(h.endSession))

	// The API's own description, health and metrics.
	h.handle("GET /v1/openapi.yaml", accessPublic, serveOpenAPI)
	h.handle("GET /v1/health", accessPublic, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	h.handle("GET /metrics", accessLocal, promhttp.HandlerFor(d.Metrics, promhttp.HandlerOpts{}).ServeHTTP)
	h.handle("/", accessLocal, h.notFound)
	return nil
}

// registerJobs adds the job summaries.
func (h *Handler) registerJobs(view *JobView) {
	h.handle("GET /v1/jobs", accessLocal, func(w http.ResponseWriter, r *http.Request) {
		js, err := view.List(r.Context())
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		writeJSON(w, http.StatusOK, js)
	})
	h.handle("GET /v1/jobs/{id}", accessLocal, serveJob(view.Summary))
	h.handle("GET /v1/jobs/{id}/describe", accessLocal, serveJob(view.Describe))
}

// serveJob answers a read of the job the path's {id} names with what get
// returns for it: 400 for a malformed ID, 404 for an unknown job.
func serveJob[T any](get func(context.Context, jobs.ID) (T, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := jobs.ParseHash(r.PathValue("id"))
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("job ID: %w", err))
			return
		}
		v, err := get(r.Context(), id)
		switch {
		case errors.Is(err, ErrNoSuchJob):
			writeError(w, http.StatusNotFound, err)
		case err != nil:
			writeError(w, http.StatusInternalServerError, err)
		default:
			writeJSON(w, http.StatusOK, v)
		}
	}
}

// notFound answers paths no route has: a known path asked with another
// method is 405, with the methods it takes.
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := h.mux.Handler(probe); pattern != "/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("%s %s: method not allowed (allowed: %s)", r.Method, r.URL.Path, strings.Join(allow, ", ")))
		return
	}
	writeError(w, http.StatusNotFound, fmt.Errorf("no such endpoint: %s %s", r.Method, r.URL.Path))
}

// limitBody bounds a request's body at maxBody.
func limitBody(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		next(w, r)
	}
}

// upload gives an authenticated upload's body UploadTimeout in place of
// the server's ReadTimeout (uploads may be large, other bodies are small),
// and its answer WriteTimeout after that. The guard has run, so a client
// without credentials never gets the longer deadline.
func (h *Handler) upload(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		// Both fail only where the writer has no connection to set them on.
		upload := time.Duration(h.cfg.UploadTimeout)
		_ = rc.SetReadDeadline(time.Now().Add(upload))
		_ = rc.SetWriteDeadline(time.Now().Add(upload + time.Duration(h.cfg.WriteTimeout)))
		next(w, r)
	}
}
