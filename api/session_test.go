package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
)

// documentedAccess is who may read each GET route, as api/openapi.yaml
// (x-jobmesh-access) lists it: "local" reads are open to loopback clients,
// "public" ones to every client that passes the Host and Origin checks.
var documentedAccess = map[string]string{
	"/v1/id": "local", "/v1/peers": "local", "/v1/nodes": "local",
	"/v1/dispatch/nodes": "local", "/v1/queue": "local", "/v1/operator": "local",
	"/v1/jobs": "local", "/v1/jobs/{id}": "local", "/v1/events": "local",
	"/v1/jobs/{id}/output": "local", "/v1/jobs/{id}/tiles.png": "local", "/v1/jobs/{id}/describe": "local",
	"/metrics":      "local",
	"/ui/{file...}": "public", "/ui": "public", "/v1/openapi.yaml": "public", "/v1/health": "public",
}

// serveDirect runs one request through h without a network, from remote
// with the Host header host. Its context is already cancelled, so that an
// event stream returns once it has answered.
func serveDirect(h http.Handler, method, path, remote, host string, edit func(*http.Request)) *httptest.ResponseRecorder {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequestWithContext(ctx, method, path, nil)
	r.RemoteAddr, r.Host = remote, host
	if edit != nil {
		edit(r)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestReadAccess: every GET route is open or closed as documented; reads
// from beyond loopback need the token; a foreign Host or Origin is refused
// even for reads (a rebinding page could read the node otherwise).
func TestReadAccess(t *testing.T) {
	m := meshtest.New(t, localmesh.Options{Processors: 1})
	h := nodeHandler(m.Bootstrap().Node)
	bearer := func(tok string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
	}
	refused := func(code int) bool { return code == http.StatusUnauthorized || code == http.StatusForbidden }
	const local, remote = "127.0.0.1:40000", "192.0.2.7:40000"
	n := 0
	for _, rt := range h.Routes() {
		if rt.Method != http.MethodGet {
			continue
		}
		n++
		want, ok := documentedAccess[rt.Path]
		if !ok || rt.Access != want {
			t.Errorf("GET %s is %q, documented %q", rt.Path, rt.Access, want)
			continue
		}
		path := strings.NewReplacer("{id}", strings.Repeat("ab", 32), "{file...}", "app.js").Replace(rt.Path)
		check := func(what, remoteAddr, host string, edit func(*http.Request), wantRefused bool) {
			t.Helper()
			if got := serveDirect(h, http.MethodGet, path, remoteAddr, host, edit).Code; refused(got) != wantRefused {
				t.Errorf("GET %s, %s: %d (refused: want %v)", rt.Path, what, got, wantRefused)
			}
		}
		check("loopback, anonymous", local, "127.0.0.1:5001", nil, false)
		check("IPv6 loopback, anonymous", "[::1]:40000", "[::1]:5001", nil, false)
		check("loopback, by name", local, "localhost:5001", nil, false)
		check("remote, anonymous", remote, "127.0.0.1:5001", nil, want != "public")
		check("remote, with the token", remote, "127.0.0.1:5001", bearer(h.Token()), false)
		check("loopback, wrong token", local, "127.0.0.1:5001", bearer(strings.Repeat("f", 64)), true)
		check("loopback, rebinding Host", local, "attacker-rebind.example:5001", bearer(h.Token()), true)
		check("loopback, foreign Origin", local, "127.0.0.1:5001", func(r *http.Request) { r.Header.Set("Origin", "http://attacker.example") }, true)
		check("loopback, same Origin", local, "127.0.0.1:5001", func(r *http.Request) { r.Header.Set("Origin", "http://127.0.0.1:5001") }, false)
	}
	if n != len(documentedAccess) {
		t.Errorf("%d GET routes, %d documented", n, len(documentedAccess))
	}
}

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestDashboardSession: a one-time code gives one HttpOnly, SameSite=Strict
// session cookie and a CSRF token; the code works once and expires; the
// session reads from beyond loopback, changes state only with its CSRF
// token, and expires. Allowed hosts and origins are honoured.
func TestDashboardSession(t *testing.T) {
	m := meshtest.New(t, localmesh.Options{Processors: 1})
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	cfg := api.DefaultConfig()
	cfg.Token = strings.Repeat("t", 64)
	cfg.Now = clk.Now
	cfg.MaxSessions = 2
	cfg.AllowedHosts = []string{"node.lan"}
	cfg.AllowedOrigins = []string{"https://dash.example:8443"}
	h, err := api.New(m.Bootstrap().Node.APIDeps(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	reg := m.Bootstrap().Node.Metrics

	exchange := func(code string) *http.Response {
		t.Helper()
		body, _ := json.Marshal(apiv1.SessionRequest{Code: code})
		resp, err := http.Post(srv.URL+"/v1/session", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	codeOf := func() string {
		link, _ := h.LoginURL(srv.URL)
		_, code, _ := strings.Cut(link, "#login=")
		return code
	}

	before := counter(t, reg, "jobmesh_api_refusals_total", "reason", "login")
	if resp := exchange("not-a-code"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a made-up code: %d", resp.StatusCode)
	}
	code := codeOf()
	resp := exchange(code)
	var s apiv1.Session
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || resp.StatusCode != http.StatusCreated || len(s.CSRF) < 32 {
		t.Fatalf("exchange: %d %+v (%v)", resp.StatusCode, s, err)
	}
	if !s.Expires.Equal(clk.Now().Add(cfg.SessionTTL)) {
		t.Fatalf("session expires %v", s.Expires)
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Path != "/" {
		t.Fatalf("session cookie %+v", cookies)
	}
	cookie := cookies[0]
	if resp := exchange(code); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a spent code: %d", resp.StatusCode)
	}
	stale := codeOf()
	clk.advance(cfg.LoginTTL)
	if resp := exchange(stale); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an expired code: %d", resp.StatusCode)
	}
	if got := counter(t, reg, "jobmesh_api_refusals_total", "reason", "login"); got != before+3 {
		t.Fatalf("login refusals went from %v to %v, want +3", before, got)
	}

	// The session reads from beyond loopback; it changes state only with
	// its CSRF token (the login endpoint takes the token alone).
	const remote = "192.0.2.7:40000"
	host := strings.TrimPrefix(srv.URL, "http://")
	withCookie := func(r *http.Request) { r.AddCookie(cookie) }
	if got := serveDirect(h, http.MethodGet, "/v1/jobs", remote, host, withCookie).Code; got != http.StatusOK && got != http.StatusInternalServerError {
		t.Fatalf("a remote read with the session: %d", got)
	}
	if got := serveDirect(h, http.MethodGet, "/v1/jobs", remote, host, nil).Code; got != http.StatusUnauthorized {
		t.Fatalf("a remote read without it: %d", got)
	}
	if got := serveDirect(h, http.MethodPost, "/v1/login", "127.0.0.1:1", host, func(r *http.Request) {
		withCookie(r)
		r.Header.Set(apiv1.CSRFHeader, s.CSRF)
	}).Code; got != http.StatusUnauthorized {
		t.Fatalf("a login code asked by a session: %d", got)
	}

	checkAllowedHostsAndOrigins(t, h)

	// At most MaxSessions codes wait: the oldest goes.
	first := codeOf()
	codeOf()
	codeOf()
	if resp := exchange(first); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a code pushed out by newer ones: %d", resp.StatusCode)
	}

	// The session ends at its expiry.
	clk.advance(cfg.SessionTTL)
	if got := serveDirect(h, http.MethodGet, "/v1/jobs", remote, host, withCookie).Code; got != http.StatusUnauthorized {
		t.Fatalf("a remote read with an expired session: %d", got)
	}
}

// checkAllowedHostsAndOrigins checks that h, configured with the allowed
// host node.lan and origin https://dash.example:8443, serves them and
// refuses look-alikes.
func checkAllowedHostsAndOrigins(t *testing.T, h http.Handler) {
	t.Helper()
	for _, tc := range []struct {
		host, origin string
		want         int
	}{
		{"node.lan:5001", "", http.StatusOK},
		{"NODE.LAN", "", http.StatusOK},
		{"node.lan.attacker.example", "", http.StatusForbidden},
		{"127.0.0.1:5001", "https://dash.example:8443", http.StatusOK},
		{"127.0.0.1:5001", "http://dash.example:8443", http.StatusForbidden},
	} {
		got := serveDirect(h, http.MethodGet, "/v1/health", "127.0.0.1:1", tc.host, func(r *http.Request) {
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
		}).Code
		if got != tc.want {
			t.Errorf("Host %q, Origin %q: %d, want %d", tc.host, tc.origin, got, tc.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	cfg := api.DefaultConfig()
	if err := cfg.Validate(); !errors.Is(err, api.ErrInvalidConfig) {
		t.Fatalf("no token: %v", err)
	}
	cfg.Token = strings.Repeat("x", api.MinTokenLen)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*api.Config){
		"short token":         func(c *api.Config) { c.Token = "short" },
		"no read timeout":     func(c *api.Config) { c.ReadTimeout = 0 },
		"no upload timeout":   func(c *api.Config) { c.UploadTimeout = 0 },
		"tiny headers":        func(c *api.Config) { c.MaxHeaderBytes = 10 },
		"no sessions":         func(c *api.Config) { c.MaxSessions = 0 },
		"bad origin":          func(c *api.Config) { c.AllowedOrigins = []string{"dash.example"} },
		"per client over cap": func(c *api.Config) { c.MaxEventStreamsPerClient = c.MaxEventStreams + 1 },
	} {
		c := cfg
		edit(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: valid", name)
		}
	}
}
