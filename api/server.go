package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/ui"
)

// ID describes the node serving the API.
type ID = apiv1.ID

// Peer is one connected peer.
type Peer = apiv1.Peer

// Error is the body of every error response.
type Error = apiv1.Error

// NewHandler returns the API of n.
func NewHandler(n *node.Node) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/id", func(w http.ResponseWriter, r *http.Request) {
		id := ID{PeerID: n.Host.ID().String(), Role: string(n.Role), Version: node.Version, Addrs: []string{}}
		if n.Escrow != nil {
			id.Escrow = strings.ToLower(n.Escrow.Address().Hex())
		}
		for _, a := range n.Host.FullAddrs() {
			id.Addrs = append(id.Addrs, a.String())
		}
		writeJSON(w, http.StatusOK, id)
	})
	mux.HandleFunc("GET /v1/peers", func(w http.ResponseWriter, r *http.Request) {
		peers := []Peer{}
		for _, p := range n.Host.Peers() {
			pi := Peer{PeerID: p.String(), Addrs: []string{}}
			for _, c := range n.Host.Network().ConnsToPeer(p) {
				pi.Addrs = append(pi.Addrs, c.RemoteMultiaddr().String())
			}
			peers = append(peers, pi)
		}
		writeJSON(w, http.StatusOK, peers)
	})
	mux.HandleFunc("GET /v1/nodes", func(w http.ResponseWriter, r *http.Request) {
		ads, err := n.Processors(r.Context())
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		writeJSON(w, http.StatusOK, ads)
	})
	registerDispatch(mux, n)
	view := &JobView{Store: n.Store, Chain: n.Escrow, Blocks: n.IPFS}
	if n.DApp != nil {
		view.Mine = n.DApp.Submitted
	}
	mux.HandleFunc("GET /v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		js, err := view.List(r.Context())
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		writeJSON(w, http.StatusOK, js)
	})
	mux.HandleFunc("GET /v1/jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := jobs.ParseHash(r.PathValue("id"))
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("job ID: %w", err))
			return
		}
		j, err := view.Summary(r.Context(), id)
		switch {
		case errors.Is(err, ErrNoSuchJob):
			writeError(w, http.StatusNotFound, err)
		case err != nil:
			writeError(w, http.StatusInternalServerError, err)
		default:
			writeJSON(w, http.StatusOK, j)
		}
	})
	// Job events, outputs and the dashboard.
	events, err := NewEvents(view, DefaultEventsConfig(), n.Log)
	if err != nil {
		panic(err) // the defaults are valid
	}
	mux.Handle("GET /v1/events", events)
	if err := newCollector(view, events).register(n.Metrics); err != nil {
		n.Log.Warn("job metrics not registered", "err", err)
	}
	outputs := &Outputs{Store: n.Store, Blocks: n.IPFS}
	mux.HandleFunc("GET /v1/jobs/{id}/output", outputs.ServeOutput)
	mux.HandleFunc("GET /v1/jobs/{id}/tiles.png", outputs.ServeTiles)
	mux.Handle("GET /ui/", ui.Handler())
	mux.Handle("GET /ui", ui.Handler())

	// The submitting side: uploads, submission, cancellation; and the
	// API's own description.
	sub := &submitter{n: n, view: view, maxUpload: n.Config.API.MaxUploadMiB << 20}
	mux.HandleFunc("POST /v1/content", sub.content)
	mux.HandleFunc("POST /v1/jobs", sub.submit)
	mux.HandleFunc("POST /v1/jobs/{id}/cancel", sub.cancel)
	mux.HandleFunc("GET /v1/openapi.yaml", serveOpenAPI)

	mux.HandleFunc("GET /v1/health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(n.Metrics, promhttp.HandlerOpts{}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// A known path asked with another method is 405, with the
		// methods it takes.
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := mux.Handler(probe); pattern != "/" && pattern != "" {
				allow = append(allow, m)
			}
		}
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("%s %s: method not allowed (allowed: %s)", r.Method, r.URL.Path, strings.Join(allow, ", ")))
			return
		}
		writeError(w, http.StatusNotFound, fmt.Errorf("no such endpoint: %s %s", r.Method, r.URL.Path))
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, Error{Error: err.Error()})
}

// Server serves the API on a TCP address.
type Server struct {
	srv *http.Server
	ln  net.Listener
	log *slog.Logger
}

// Listen binds addr (port 0 picks a free port) and starts serving handler.
func Listen(addr string, handler http.Handler, log *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("api: listen on %s: %w", addr, err)
	}
	// Requests run under a context that Shutdown cancels, so that
	// long-lived responses (event streams) end instead of holding it up.
	base, cancel := context.WithCancel(context.Background())
	s := &Server{
		srv: &http.Server{
			Handler:           handler,
			ReadHeaderTimeout: 10 * time.Second,
			MaxHeaderBytes:    64 << 10,
			BaseContext:       func(net.Listener) context.Context { return base },
		},
		ln:  ln,
		log: log,
	}
	s.srv.RegisterOnShutdown(cancel)
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("api server stopped", "err", err)
		}
	}()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Shutdown stops accepting requests and waits for the running ones.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }
