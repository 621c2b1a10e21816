package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	dto "github.com/prometheus/client_model/go"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshclient"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/node"
)

// serve starts n's API on a loopback server; the client carries the
// handler's token.
func serve(t *testing.T, n *node.Node) (*httptest.Server, *meshclient.Client) {
	t.Helper()
	srv, c, _ := serveHandler(t, nodeHandler(n))
	return srv, c
}

func serveHandler(t *testing.T, h *api.Handler) (*httptest.Server, *meshclient.Client, *api.Handler) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, meshclient.New(srv.URL, meshclient.WithToken(h.Token())), h
}

// counter reads a counter of reg: the sum of the series whose labels
// include every name=value pair of labels.
func counter(t *testing.T, reg interface {
	Gather() ([]*dto.MetricFamily, error)
}, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, lp := range m.GetLabel() {
				have[lp.GetName()] = lp.GetValue()
			}
			match := true
			for i := 0; i+1 < len(labels); i += 2 {
				match = match && have[labels[i]] == labels[i+1]
			}
			if match {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

// session signs in through a one-time code as the dashboard does and
// returns the session cookie and CSRF token.
func session(t *testing.T, h *api.Handler, base string) (*http.Cookie, string) {
	t.Helper()
	link, _ := h.LoginURL(base)
	_, code, ok := strings.Cut(link, "#login=")
	if !ok || !strings.HasPrefix(link, base+"/ui/") {
		t.Fatalf("login URL %q", link)
	}
	body, _ := json.Marshal(apiv1.SessionRequest{Code: code})
	resp, err := http.Post(base+"/v1/session", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s apiv1.Session
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || resp.StatusCode != http.StatusCreated || s.CSRF == "" {
		t.Fatalf("POST /v1/session: %d %+v (%v)", resp.StatusCode, s, err)
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("session cookies %v", cookies)
	}
	return cookies[0], s.CSRF
}

// attack is one way a request may try to reach a state-changing route
// without the right to.
type attack struct {
	name   string
	status int    // the answer
	reason string // the refusal counted
	edit   func(r *http.Request)
}

// validRequest is the body that makes a state-changing route succeed.
type validRequest struct {
	contentType string
	body        []byte
	status      int
}

// attackFixture is a client node on a chain, its API, an open job to
// cancel and a signed-in dashboard session.
type attackFixture struct {
	t      *testing.T
	m      *localmesh.Mesh
	client *localmesh.Member
	srv    *httptest.Server
	c      *meshclient.Client
	h      *api.Handler
	target apiv1.Job
	cookie *http.Cookie
	csrf   string
	bodies map[string]validRequest // "METHOD /path" → a request that succeeds
}

func newAttackFixture(t *testing.T) *attackFixture {
	m := meshtest.New(t, localmesh.Options{Processors: 1, Clients: 1, Chain: &localmesh.ChainOptions{}})
	f := &attackFixture{t: t, m: m, client: m.Members[len(m.Members)-1]}
	f.srv, f.c, f.h = serveHandler(t, nodeHandler(f.client.Node))
	ctx := context.Background()
	code, err := f.c.Upload(ctx, bytes.NewReader(wordcount(t)))
	if err != nil {
		t.Fatal(err)
	}
	data, err := f.c.Upload(ctx, bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	// A job no processor can take (1 TiB of VRAM) stays open: the target
	// of the cancel attacks.
	submit := apiv1.SubmitRequest{
		Code: apiv1.Source{URI: code.URI, SHA256: code.SHA256}, Data: apiv1.Source{URI: data.URI, SHA256: data.SHA256},
		Slicing: apiv1.Slicing{BlockSize: 128, MicroJobs: 2, BlocksPerMicro: 1}, PriceWei: "21000000000000",
		Requirements: apiv1.Requirements{MinVRAMMiB: 1 << 20},
	}
	if f.target, err = f.c.Submit(ctx, submit); err != nil || f.target.State != apiv1.JobOpen {
		t.Fatalf("submit: %+v (%v)", f.target, err)
	}
	submit.PriceWei = "22000000000000" // another job ID
	submitBody, _ := json.Marshal(submit)
	f.cookie, f.csrf = session(t, f.h, f.srv.URL)
	// A new state-changing route fails the test until it is added here
	// (and so attacked).
	f.bodies = map[string]validRequest{
		"POST /v1/content":          {"application/octet-stream", []byte("new content"), http.StatusCreated},
		"POST /v1/jobs":             {"application/json", submitBody, http.StatusCreated},
		"POST /v1/jobs/plan":        {"application/json", submitBody, http.StatusOK},
		"POST /v1/jobs/{id}/cancel": {"", nil, http.StatusOK},
		"POST /v1/login":            {"", nil, http.StatusCreated},
		"DELETE /v1/session":        {"", nil, http.StatusNoContent},
	}
	return f
}

// stateChangingRoutes lists the router's routes that change state, but
// the code exchange (TestDashboardSession's).
func (f *attackFixture) stateChangingRoutes() []api.Route {
	var routes []api.Route
	for _, rt := range f.h.Routes() {
		switch {
		case rt.Method == http.MethodGet || rt.Access == "login":
			continue
		case rt.Method == "" && rt.Path == "/":
			continue // the catch-all 404/405 answer, tried in otherMethods
		case rt.Method == "":
			f.t.Fatalf("route %s serves every method", rt.Path)
		}
		if _, ok := f.bodies[rt.Method+" "+rt.Path]; !ok {
			f.t.Fatalf("state-changing route %s %s has no valid request in this test", rt.Method, rt.Path)
		}
		routes = append(routes, rt)
	}
	if len(routes) != len(f.bodies) {
		f.t.Fatalf("the router has %d state-changing routes, the test knows %d", len(routes), len(f.bodies))
	}
	return routes
}

// request is rt's valid request, changed by edit.
func (f *attackFixture) request(rt api.Route, edit func(*http.Request)) *http.Request {
	v := f.bodies[rt.Method+" "+rt.Path]
	r, _ := http.NewRequest(rt.Method, f.srv.URL+strings.ReplaceAll(rt.Path, "{id}", f.target.ID), bytes.NewReader(v.body))
	if v.contentType != "" {
		r.Header.Set("Content-Type", v.contentType)
	}
	edit(r)
	return r
}

func (f *attackFixture) bearer(r *http.Request) { r.Header.Set("Authorization", "Bearer "+f.h.Token()) }

func (f *attackFixture) withSession(r *http.Request) { r.AddCookie(f.cookie) }

func form(ct, body string) func(*http.Request) {
	return func(r *http.Request) {
		r.Body, r.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
		r.Header.Set("Content-Type", ct)
	}
}

func (f *attackFixture) attacks() []attack {
	u, _ := url.Parse(f.srv.URL)
	bearer, withSession, tok, csrf := f.bearer, f.withSession, f.h.Token(), f.csrf
	return []attack{
		{"DNS rebinding (foreign Host)", 403, "host", func(r *http.Request) { bearer(r); r.Host = "attacker-rebind.example:" + u.Port() }},
		{"foreign Host without a port", 403, "host", func(r *http.Request) { r.Host = "attacker-rebind.example" }},
		{"foreign Origin", 403, "origin", func(r *http.Request) { bearer(r); r.Header.Set("Origin", "http://attacker.example") }},
		{"Origin of another local port", 403, "origin", func(r *http.Request) { bearer(r); r.Header.Set("Origin", "http://127.0.0.1:1") }},
		{"opaque Origin", 403, "origin", func(r *http.Request) { bearer(r); r.Header.Set("Origin", "null") }},
		{"Sec-Fetch-Site cross-site", 403, "origin", func(r *http.Request) { bearer(r); r.Header.Set("Sec-Fetch-Site", "cross-site") }},
		{"cross-site form post", 403, "origin", func(r *http.Request) {
			form("application/x-www-form-urlencoded", "a=b")(r)
			r.Header.Set("Origin", "http://attacker.example")
		}},
		{"form post", 415, "form", form("application/x-www-form-urlencoded", "a=b")},
		{"multipart form post with the token", 415, "form", func(r *http.Request) {
			bearer(r)
			form("multipart/form-data; boundary=x", "--x--")(r)
		}},
		{"text/plain post with the token", 415, "form", func(r *http.Request) { bearer(r); form("text/plain", "{}")(r) }},
		{"no token", 401, "token", func(*http.Request) {}},
		{"wrong token", 401, "token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+strings.Repeat("0", 64)) }},
		{"token with another scheme", 401, "token", func(r *http.Request) { r.Header.Set("Authorization", "Basic "+tok) }},
		{"token in the query", 401, "token", func(r *http.Request) { r.URL.RawQuery = "token=" + tok }},
		{"session without its CSRF token", 403, "csrf", withSession},
		{"session with a wrong CSRF token", 403, "csrf", func(r *http.Request) { withSession(r); r.Header.Set(apiv1.CSRFHeader, "x"+csrf) }},
		{"session from another port's page", 403, "csrf", func(r *http.Request) {
			withSession(r)
			r.Header.Set(apiv1.CSRFHeader, csrf)
			r.Header.Set("Sec-Fetch-Site", "same-site")
		}},
	}
}

// try sends one attack on rt and checks its refusal and count.
func (f *attackFixture) try(rt api.Route, a attack) {
	t, reg := f.t, f.client.Node.Metrics
	status, reason := a.status, a.reason
	if rt.Access == "token" && reason == "csrf" {
		status, reason = 401, "token" // a session is no credential there
	}
	before := counter(t, reg, "jobmesh_api_refusals_total", "reason", reason)
	resp, err := http.DefaultClient.Do(f.request(rt, a.edit))
	if err != nil {
		t.Fatal(err)
	}
	var e api.Error
	decodeErr := json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != status || decodeErr != nil || e.Error == "" {
		t.Errorf("%s %s, %s: %d %q, want %d with a JSON error", rt.Method, rt.Path, a.name, resp.StatusCode, e.Error, status)
	}
	if status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("%s %s, %s: 401 without WWW-Authenticate", rt.Method, rt.Path, a.name)
	}
	if got := counter(t, reg, "jobmesh_api_refusals_total", "reason", reason); got != before+1 {
		t.Errorf("%s %s, %s: refusals{reason=%q} went from %v to %v", rt.Method, rt.Path, a.name, reason, before, got)
	}
}

// otherMethods: methods that no route takes on rt's path need the token
// before they learn even that.
func (f *attackFixture) otherMethods(rt api.Route) {
	for _, method := range []string{http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodPost} {
		if slices.ContainsFunc(f.h.Routes(), func(o api.Route) bool { return o.Method == method && o.Path == rt.Path }) {
			continue
		}
		r, _ := http.NewRequest(method, f.srv.URL+strings.ReplaceAll(rt.Path, "{id}", f.target.ID), nil)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			f.t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			f.t.Errorf("%s %s without a token: %d, want 401", method, rt.Path, resp.StatusCode)
		}
	}
}

// effects is what a state-changing request that got through would change.
type effects struct {
	nonce  uint64   // transactions the wallet sent
	credit *big.Int // the wallet's escrow credit (a cancel refunds)
	added  float64  // files added to the block layer
	jobs   []apiv1.JobState
}

func (f *attackFixture) effects() effects {
	ctx := context.Background()
	nonce, err := f.m.Chain.Client().PendingNonceAt(ctx, f.client.Wallet)
	if err != nil {
		f.t.Fatal(err)
	}
	credit, err := f.client.Escrow.CreditOf(ctx, f.client.Wallet)
	if err != nil {
		f.t.Fatal(err)
	}
	list, err := f.c.Jobs(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	e := effects{nonce: nonce, credit: credit, added: counter(f.t, f.client.Node.Metrics, "jobmesh_ipfs_files_added_total")}
	for _, j := range list {
		e.jobs = append(e.jobs, j.State)
	}
	return e
}

// TestStateChangingEndpointsRefuseAttackers sends every state-changing
// route of the router, with a body that the right credentials make
// succeed, as a DNS-rebinding page, a cross-site page, a form post, and
// a client with no token, a wrong one or a session without its CSRF
// token. Each is refused and counted, and nothing changed: no job
// published or cancelled, no content added, no transaction sent. Then
// the same requests with the token (or the session and its CSRF token)
// succeed.
func TestStateChangingEndpointsRefuseAttackers(t *testing.T) {
	f := newAttackFixture(t)
	routes := f.stateChangingRoutes()
	before := f.effects()
	for _, rt := range routes {
		for _, a := range f.attacks() {
			f.try(rt, a)
		}
		f.otherMethods(rt)
	}
	after := f.effects()
	if after.nonce != before.nonce || after.credit.Cmp(before.credit) != 0 || after.added != before.added ||
		!slices.Equal(after.jobs, []apiv1.JobState{apiv1.JobOpen}) {
		t.Fatalf("the attacks changed the node: before %+v, after %+v", before, after)
	}
	jid, _ := jobs.ParseHash(f.target.ID)
	if ej, err := f.m.Escrow.Job(context.Background(), f.client.Node.Escrow.KeyOf(common.Hash(jid))); err != nil || ej.State != escrow.JobFunded {
		t.Fatalf("escrow of the target: %v (%v)", ej.State, err)
	}
	f.legitimate(routes, before)
}

// legitimate sends each state-changing route's request with the token,
// the cancel with the session and its CSRF token from the page's own
// origin, and ends the session last.
func (f *attackFixture) legitimate(routes []api.Route, before effects) {
	t := f.t
	inPage := func(r *http.Request) {
		f.withSession(r)
		r.Header.Set(apiv1.CSRFHeader, f.csrf)
		r.Header.Set("Origin", f.srv.URL)
		r.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	do := func(rt api.Route, edit func(*http.Request), want int) {
		t.Helper()
		resp, err := http.DefaultClient.Do(f.request(rt, edit))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s, want %d", rt.Method, rt.Path, resp.StatusCode, b, want)
		}
	}
	for _, rt := range routes {
		switch rt.Path {
		case "/v1/session":
			continue // ended below
		case "/v1/jobs/{id}/cancel":
			do(rt, inPage, http.StatusOK)
		default:
			do(rt, f.bearer, f.bodies[rt.Method+" "+rt.Path].status)
		}
	}
	after := f.effects()
	if !slices.Contains(after.jobs, apiv1.JobCancelled) || len(after.jobs) != 2 || after.added <= before.added || after.nonce <= before.nonce {
		t.Fatalf("with credentials: before %+v, after %+v; want the target cancelled, a job and a file added", before, after)
	}
	logout := api.Route{Method: http.MethodDelete, Path: "/v1/session"}
	do(logout, inPage, http.StatusNoContent)
	// The ended session is no credential.
	do(api.Route{Method: http.MethodPost, Path: "/v1/content"}, inPage, http.StatusUnauthorized)
}
