package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/ipfs"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/p2p"
)

// Mesh answers the reads that take the node's view of the processors:
// their advertisements, their dispatch grades and the open jobs' queue.
// The node implements it; the API only renders what it returns.
type Mesh interface {
	// Processors returns the advertised processors (GET /v1/nodes).
	Processors(ctx context.Context) ([]apiv1.Node, error)
	// Dispatch returns the live processors with their grades, stakes,
	// QoS scores and selection weights (GET /v1/dispatch/nodes).
	Dispatch(ctx context.Context) (DispatchNodes, error)
	// Queue returns the open jobs in their dispatch groups (GET /v1/queue).
	Queue(ctx context.Context) (Queue, error)
}

// Deps are the parts of a node the API serves from. The API reads them and
// closes none.
type Deps struct {
	Host    *p2p.Host
	Role    string // bootstrap, processor or client
	Version string // the node software's, reported by GET /v1/id
	Store   crdt.Replicated
	IPFS    *ipfs.Node
	// DApp submits jobs; nil on a node that does not (POST answers 501).
	DApp *dapp.Client
	// Escrow is the node's escrow client; nil without a chain.
	Escrow  *escrow.Client
	Metrics *prometheus.Registry
	Log     *slog.Logger // nil: slog.Default()
	Mesh    Mesh
	// FailReports is how many processors must report the same failure of
	// a job for its summary to say failed (dispatch.Config's
	// FailReports); 0: 2.
	FailReports int
	// Holds reports whether this node holds job id's own records (its
	// job store, [store] job_stores); nil: every job's records reach the
	// node. A settled job whose records it does not hold is shown from
	// the job's outcome summary.
	Holds func(id jobs.ID) bool
	// Operator reports the node's own work, earnings, resources and
	// recent warnings (GET /v1/operator); nil answers 501.
	Operator func(ctx context.Context) (apiv1.Operator, error)
}

// ID describes the node serving the API.
type ID = apiv1.ID

// Peer is one connected peer.
type Peer = apiv1.Peer

// Error is the body of every error response.
type Error = apiv1.Error

// Route is one registered endpoint: its method ("" for every method: only
// the catch-all "/" that answers 404 and 405), its path pattern and who
// may call it ("auth": the token or a dashboard session; "local": reads
// open to loopback clients; "public": reads open to every client that
// passes the Host and Origin checks; "token": the token only; "login":
// the one-time code exchange).
type Route struct {
	Method, Path, Access string
}

// Handler is the API of one node: the guard of every request (guard.go)
// in front of the routes (routes.go).
type Handler struct {
	cfg      Config
	mux      *http.ServeMux
	access   map[string]access // pattern → who may call it
	routes   []Route
	sessions *sessions
	refusals *prometheus.CounterVec
	log      *slog.Logger
}

// NewHandler returns the API of d under cfg, a node's [api] section, with
// a fresh random token (Token), for tests and in-process meshes. A daemon
// uses New with the repo's token.
func NewHandler(d Deps, cfg Config) *Handler {
	cfg.Token = secret()
	h, err := New(d, cfg)
	if err != nil {
		panic(err) // a node's config was validated, and the token is long enough
	}
	return h
}

// New returns the API of d under cfg.
func New(d Deps, cfg Config) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	h := &Handler{
		cfg: cfg, mux: http.NewServeMux(), access: map[string]access{}, sessions: newSessions(cfg),
		refusals: newRefusals(d.Metrics), log: d.Log.With("subsystem", "api"),
	}
	if err := h.register(d); err != nil {
		return nil, err
	}
	return h, nil
}

// Token is the bearer token the handler accepts.
func (h *Handler) Token() string { return h.cfg.Token }

// Routes lists every registered endpoint, in registration order.
func (h *Handler) Routes() []Route { return slices.Clone(h.routes) }

// handle registers pattern ("METHOD /path") for callers with access a.
func (h *Handler) handle(pattern string, a access, hf http.HandlerFunc) {
	h.mux.Handle(pattern, hf)
	h.access[pattern] = a
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "", pattern
	}
	h.routes = append(h.routes, Route{Method: method, Path: path, Access: a.String()})
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

// Listen binds addr (port 0 picks a free port) and starts serving handler
// with cfg's timeouts and header limit.
func Listen(addr string, handler http.Handler, cfg Config, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
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
			ReadHeaderTimeout: time.Duration(cfg.ReadHeaderTimeout),
			ReadTimeout:       time.Duration(cfg.ReadTimeout),
			WriteTimeout:      time.Duration(cfg.WriteTimeout),
			IdleTimeout:       time.Duration(cfg.IdleTimeout),
			MaxHeaderBytes:    cfg.MaxHeaderBytes,
			BaseContext:       func(net.Listener) context.Context { return base },
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
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

// BaseURL is the URL a local client reaches the server at: its address,
// with a loopback address in place of an unspecified one.
func (s *Server) BaseURL() string {
	host, port, err := net.SplitHostPort(s.Addr())
	if err != nil {
		return "http://" + s.Addr()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip.To4() == nil {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Shutdown stops accepting requests and waits for the running ones.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }
