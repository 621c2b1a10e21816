package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
)

// evalAwait evaluates a JavaScript expression whose value is a promise and
// returns what it resolves to, as JSON.
func (b *browser) evalAwait(expr string) json.RawMessage {
	b.t.Helper()
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	b.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &res)
	if res.Exception != nil {
		b.t.Fatalf("evaluating %q: %s", expr, res.Exception.Text)
	}
	return res.Result.Value
}

// pageState is what the dashboard shows of one job and its session.
type pageState struct {
	Session, Row, Hash string
	Cancel             bool
}

func (b *browser) state(id string) pageState {
	b.t.Helper()
	var st pageState
	raw := b.eval(`(() => {
		const row = document.querySelector('tr.job[data-job="` + id + `"]');
		return {Session: (document.body && document.body.dataset.session) || "", Row: row ? row.dataset.state : "",
			Hash: location.hash, Cancel: !!document.getElementById("cancel-job")};
	})()`)
	if err := json.Unmarshal(raw, &st); err != nil {
		b.t.Fatal(err)
	}
	return st
}

// TestDashboardSignInAndCancel drives the dashboard in Chromium: read-only
// without signing in; signed in by the one-time link, whose code then
// leaves the URL and works no more; a page of another site that posts a
// cancel to the node (by fetch and by form) is refused although the
// browser holds the session; and the signed-in dashboard cancels the job.
func TestDashboardSignInAndCancel(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil && os.Getenv("JOBMESH_REQUIRE_CHROMIUM") == "" {
		t.Skipf("%s is not installed (apt-get install chromium): %v", chromiumPath, err)
	}
	m := meshtest.New(t, localmesh.Options{Processors: 1, Timers: fastProcessors})
	n, _ := walletClient(t, m, nil)
	srv, c, h := serveHandler(t, nodeHandler(n))
	// Started after the server, so that it is stopped first: the page's
	// event stream would hold the server's Close up.
	b := startBrowser(t, 1280, 800)
	ctx := context.Background()
	up, err := c.Upload(ctx, bytes.NewReader(wordcount(t)))
	if err != nil {
		t.Fatal(err)
	}
	data, err := c.Upload(ctx, bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	job, err := c.Submit(ctx, apiv1.SubmitRequest{
		Code: apiv1.Source{URI: up.URI}, Data: apiv1.Source{URI: data.URI},
		Slicing: apiv1.Slicing{BlockSize: 128, MicroJobs: 2, BlocksPerMicro: 1}, PriceWei: "21000000000000",
		Requirements: apiv1.Requirements{MinVRAMMiB: 1 << 20}, // no processor takes it: it stays open
	})
	if err != nil {
		t.Fatal(err)
	}
	id := job.ID
	until := func(what string, ok func(pageState) bool) pageState {
		t.Helper()
		var st pageState
		wait.Until(t, time.Minute, func() error {
			if st = b.state(id); !ok(st) {
				return fmt.Errorf("%s: page shows %+v", what, st)
			}
			return nil
		})
		return st
	}

	// Read-only: the job shows, with no way to cancel it.
	b.navigate(srv.URL + "/ui/#job=" + id)
	until("read-only page", func(s pageState) bool { return s.Row == string(apiv1.JobOpen) && s.Session == "read-only" })
	if st := b.state(id); st.Cancel {
		t.Fatal("a read-only dashboard offers to cancel")
	}

	// The one-time link signs in, in the tab that shows the dashboard.
	link, _ := h.LoginURL(srv.URL)
	_, code, _ := strings.Cut(link, "#login=")
	b.navigate(link)
	until("signed in", func(s pageState) bool { return s.Session == "signed-in" && s.Hash == "" })
	checkSessionCookie(t, b, srv.URL)
	// The code is spent.
	replay := b.evalAwait(`fetch("/v1/session", {method: "POST", headers: {"Content-Type": "application/json"},
		body: JSON.stringify({code: "` + code + `"})}).then(r => r.status)`)
	if string(replay) != "401" {
		t.Fatalf("a spent code: %s", replay)
	}

	// Another site's page posts a cancel with the browser's session in
	// hand, by fetch and by a form: both are refused.
	reg := n.Metrics
	before := counter(t, reg, "jobmesh_api_refusals_total", "reason", "origin")
	target := srv.URL + "/v1/jobs/" + id + "/cancel"
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><form id="f" method="POST" action="%s" enctype="text/plain"><input name="a" value="b"></form>
<script>fetch(%q, {method: "POST", mode: "no-cors", credentials: "include"}).finally(() => document.getElementById("f").submit());</script>`, target, target)
	}))
	defer evil.Close()
	eu, _ := url.Parse(evil.URL)
	b.navigate("http://localhost:" + eu.Port() + "/") // localhost: another site than 127.0.0.1
	wait.Until(t, time.Minute, func() error {
		if got := counter(t, reg, "jobmesh_api_refusals_total", "reason", "origin"); got < before+2 {
			return fmt.Errorf("origin refusals %v, want %v", got, before+2)
		}
		return nil
	})
	if j, err := c.Job(ctx, id); err != nil || j.State != apiv1.JobOpen {
		t.Fatalf("after the other site's posts the job is %+v (%v)", j.State, err)
	}

	// Back on the dashboard (the tab keeps its session), cancel the job.
	b.navigate(srv.URL + "/ui/#job=" + id)
	until("cancel offered", func(s pageState) bool { return s.Session == "signed-in" && s.Cancel })
	b.eval(`document.getElementById("cancel-job").click()`)
	until("cancelled", func(s pageState) bool { return s.Row == string(apiv1.JobCancelled) })
	if j, err := c.Job(ctx, id); err != nil || j.State != apiv1.JobCancelled {
		t.Fatalf("the dashboard's cancel: %+v (%v)", j.State, err)
	}
}

// checkSessionCookie checks that the browser holds one session cookie for
// base, HttpOnly and SameSite=Strict, that the page's script cannot read.
func checkSessionCookie(t *testing.T, b *browser, base string) {
	t.Helper()
	var cookies struct {
		Cookies []struct {
			Name     string `json:"name"`
			HTTPOnly bool   `json:"httpOnly"`
			SameSite string `json:"sameSite"`
		} `json:"cookies"`
	}
	b.call("Network.getCookies", map[string]any{"urls": []string{base + "/"}}, &cookies)
	if len(cookies.Cookies) != 1 || !strings.HasPrefix(cookies.Cookies[0].Name, "jobmesh_session_") ||
		!cookies.Cookies[0].HTTPOnly || cookies.Cookies[0].SameSite != "Strict" {
		t.Fatalf("session cookies %+v", cookies.Cookies)
	}
	if got := string(b.eval("document.cookie")); got != `""` {
		t.Fatalf("the page's script reads the cookie: %s", got)
	}
}
