package api

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/jobmesh/jobmesh/apiv1"
)

// The errors of refused requests; each answer's message wraps one.
var (
	// ErrForbiddenHost: the Host header is neither a loopback name or
	// address nor an allowed host (DNS rebinding).
	ErrForbiddenHost = errors.New("api: host not allowed")
	// ErrForbiddenOrigin: the request comes from another site's page.
	ErrForbiddenOrigin = errors.New("api: cross-origin request refused")
	// ErrFormPost: a state-changing request with a body a browser form can
	// send without the page's consent.
	ErrFormPost = errors.New("api: form content refused")
	// ErrUnauthorized: the request needs the API token, and has none or a
	// wrong one.
	ErrUnauthorized = errors.New("api: unauthorized")
	// ErrCSRF: a dashboard session's state-changing request without its
	// CSRF token.
	ErrCSRF = errors.New("api: missing or wrong CSRF token")
)

// access says who may call a route.
type access int

const (
	// accessAuth: the bearer token, or a dashboard session (whose
	// state-changing requests also carry its CSRF token). The default:
	// a route registered without a level, or not registered, gets it.
	accessAuth access = iota
	// accessLocal: reads open to loopback clients; others as accessAuth.
	accessLocal
	// accessPublic: reads open to every client that passes the Host and
	// Origin checks (the dashboard's static files, health, the API's
	// description).
	accessPublic
	// accessToken: the bearer token only.
	accessToken
	// accessLogin: the one-time code exchange, whose body is the
	// credential its handler checks.
	accessLogin
)

func (a access) String() string {
	return [...]string{"auth", "local", "public", "token", "login"}[a]
}

// principal is who a request comes from, as far as the guard knows.
type principal struct {
	kind    principalKind
	key     string   // the client, for per-client limits
	session *session // for sessionClient
}

type principalKind int

const (
	anonymousClient principalKind = iota
	tokenClient
	sessionClient
)

func (p principal) anonymous() bool { return p.kind == anonymousClient }

type principalKey struct{}

// principalOf returns who the guard found a request to come from; a
// request that did not pass the guard (a handler served alone) is an
// anonymous client keyed by its address.
func principalOf(r *http.Request) principal {
	if p, ok := r.Context().Value(principalKey{}).(principal); ok {
		return p
	}
	return principal{kind: anonymousClient, key: "addr:" + clientAddr(r)}
}

// clientAddr is the remote address without its port; an IPv6 address
// outside loopback is taken as its /64, which one host usually holds whole.
func clientAddr(r *http.Request) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	a := ap.Addr().Unmap()
	if a.Is6() && !a.IsLoopback() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

func loopbackClient(r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// safeMethod: the methods that change nothing on this API.
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// ServeHTTP checks every request before it reaches a route: the Host
// header, the Origin and Sec-Fetch-Site headers, form content on
// state-changing methods, then the credentials the route's access level
// asks for. A refusal is answered with a JSON error and counted by
// reason; nothing of the request reaches a handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.hostAllowed(r.Host) {
		h.refuse(w, r, http.StatusForbidden, refusedHost, fmt.Errorf("%w: %q (allowed: localhost, loopback addresses, [api] allowed_hosts)", ErrForbiddenHost, r.Host))
		return
	}
	if err := h.checkOrigin(r); err != nil {
		h.refuse(w, r, http.StatusForbidden, refusedOrigin, err)
		return
	}
	safe := safeMethod(r.Method)
	if ct := r.Header.Get("Content-Type"); !safe && formContent(ct) {
		h.refuse(w, r, http.StatusUnsupportedMediaType, refusedForm, fmt.Errorf("%w: Content-Type %q, which any web page can send", ErrFormPost, ct))
		return
	}
	_, pattern := h.mux.Handler(r)
	acc := h.access[pattern] // unknown patterns get the zero value, accessAuth
	if !safe && (acc == accessLocal || acc == accessPublic) {
		acc = accessAuth
	}
	p, ok := h.authenticate(w, r, acc, safe)
	if !ok {
		return
	}
	h.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
}

// authenticate finds the request's principal under acc, or answers the
// refusal and returns false.
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request, acc access, safe bool) (principal, bool) {
	if v := r.Header.Get("Authorization"); v != "" {
		tok, ok := strings.CutPrefix(v, "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(tok), []byte(h.cfg.Token)) != 1 {
			h.refuse(w, r, http.StatusUnauthorized, refusedToken, fmt.Errorf("%w: wrong API token", ErrUnauthorized))
			return principal{}, false
		}
		return principal{kind: tokenClient, key: "token"}, true
	}
	if acc != accessToken && acc != accessLogin {
		if s := h.sessions.fromRequest(r); s != nil {
			// A session's cookie also reaches pages on this host's other
			// ports, so a change needs the CSRF token, which only the
			// page that logged in holds, from a same-origin page.
			if !safe && (!s.csrfMatches(r.Header.Get(apiv1.CSRFHeader)) || r.Header.Get("Sec-Fetch-Site") == "same-site") {
				h.refuse(w, r, http.StatusForbidden, refusedCSRF, fmt.Errorf("%w: send the session's %s header", ErrCSRF, apiv1.CSRFHeader))
				return principal{}, false
			}
			return principal{kind: sessionClient, key: "session:" + s.key, session: s}, true
		}
	}
	anon := principal{kind: anonymousClient, key: "addr:" + clientAddr(r)}
	switch {
	case acc == accessPublic, acc == accessLogin:
		return anon, true
	case acc == accessLocal && loopbackClient(r):
		return anon, true
	}
	h.refuse(w, r, http.StatusUnauthorized, refusedToken, fmt.Errorf("%w: send Authorization: Bearer <the token in the repo's %s file>", ErrUnauthorized, "api.token"))
	return principal{}, false
}

// hostAllowed: the Host header names a loopback name or address, or an
// allowed host; the port is not compared.
func (h *Handler) hostAllowed(host string) bool {
	name, ok := hostName(host)
	if !ok {
		return false
	}
	if name == "localhost" {
		return true
	}
	if a, err := netip.ParseAddr(name); err == nil && a.Unmap().IsLoopback() {
		return true
	}
	for _, a := range h.cfg.AllowedHosts {
		if strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}

// hostName reads the name of a Host header as a browser writes it: a
// DNS name or IPv4 address, or an IPv6 address in brackets, each with an
// optional numeric port. Anything else (userinfo, a path, a lone bracket)
// is refused.
func hostName(host string) (string, bool) {
	name, v6 := host, false
	if hn, port, err := net.SplitHostPort(host); err == nil {
		if !validPort(port) {
			return "", false
		}
		name, v6 = hn, strings.Contains(hn, ":") // SplitHostPort took an IPv6 address's brackets off
	} else if inner, ok := strings.CutPrefix(host, "["); ok && strings.HasSuffix(inner, "]") {
		name, v6 = strings.TrimSuffix(inner, "]"), true
	}
	if v6 {
		if a, err := netip.ParseAddr(name); err != nil || !a.Is6() {
			return "", false
		}
	}
	if name == "" {
		return "", false
	}
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-':
		case c == ':' && v6:
		default:
			return "", false
		}
	}
	return strings.ToLower(name), true
}

// validPort: a Host header's port is one to five digits.
func validPort(p string) bool {
	if len(p) == 0 || len(p) > 5 {
		return false
	}
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// checkOrigin refuses a request that a browser marks cross-site, or whose
// Origin is neither the API's own nor an allowed one. A request without
// Origin (curl, the SDK, a same-origin GET) passes.
func (h *Handler) checkOrigin(r *http.Request) error {
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" {
		return fmt.Errorf("%w: Sec-Fetch-Site %q", ErrForbiddenOrigin, site)
	}
	origin := r.Header.Get("Origin")
	if origin == "" || strings.EqualFold(origin, ownOrigin(r)) {
		return nil
	}
	for _, a := range h.cfg.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return nil
		}
	}
	return fmt.Errorf("%w: Origin %q is not %s (add it to [api] allowed_origins to allow it)", ErrForbiddenOrigin, origin, ownOrigin(r))
}

// ownOrigin is the origin the request was sent to.
func ownOrigin(r *http.Request) string {
	if r.TLS != nil {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

// formContent: a content type an HTML form (or a no-cors fetch) sends
// without a CORS preflight.
func formContent(ct string) bool {
	if ct == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		// Unparseable: refuse rather than let a handler guess.
		return true
	}
	switch mt {
	case "application/x-www-form-urlencoded", "multipart/form-data", "text/plain":
		return true
	}
	return false
}

// refuse answers a refused request and counts it by reason.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, status int, reason string, err error) {
	h.refusals.WithLabelValues(reason).Inc()
	h.log.Debug("api request refused", "reason", reason, "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="jobmesh"`)
	}
	if r.ContentLength != 0 {
		// Answer at once and close, instead of reading (to discard) a
		// body that nobody may send: a refused client cannot hold the
		// connection by sending it slowly.
		w.Header().Set("Connection", "close")
	}
	writeError(w, status, err)
}
