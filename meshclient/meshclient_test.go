package meshclient_test

import (
	"context"
	"errors"
	"go/build"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshclient"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/node"
)

// TestErrorsKeepStatusAndMessage: the API's answers reach the caller as
// *Error with their status and message.
func TestErrorsKeepStatusAndMessage(t *testing.T) {
	m := meshtest.New(t, localmesh.Options{Processors: 1})
	boot := m.Bootstrap().Node
	h := api.NewHandler(boot.APIDeps(), boot.Config.API)
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := meshclient.New(srv.URL, meshclient.WithToken(h.Token()))
	ctx := context.Background()

	id, err := c.ID(ctx)
	if err != nil || id.Role != "bootstrap" || id.PeerID != m.Bootstrap().Host.ID().String() {
		t.Fatalf("id %+v (%v)", id, err)
	}
	var e *meshclient.Error
	_, err = c.Job(ctx, strings.Repeat("0", 64))
	if !errors.As(err, &e) || e.Status != http.StatusNotFound || !strings.Contains(e.Message, "no such job") {
		t.Fatalf("unknown job: %#v", err)
	}
	_, err = c.Job(ctx, "nope")
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest || !strings.Contains(e.Message, "job ID") {
		t.Fatalf("bad job ID: %#v", err)
	}
	_, err = c.Submit(ctx, apiv1.SubmitRequest{})
	if !errors.As(err, &e) || e.Status != http.StatusNotImplemented {
		t.Fatalf("submit to a bootstrap node: %#v", err)
	}
	if !strings.Contains(err.Error(), "HTTP 501") {
		t.Fatalf("error text %q", err)
	}
	jobs, err := c.Jobs(ctx)
	if err != nil || len(jobs) != 0 {
		t.Fatalf("jobs %v (%v)", jobs, err)
	}

	// Without the token, or with a wrong one, nothing that changes state
	// gets through; reads on loopback do.
	for _, anon := range []*meshclient.Client{meshclient.New(srv.URL), meshclient.New(srv.URL, meshclient.WithToken(strings.Repeat("0", 64)))} {
		if _, err := anon.Submit(ctx, apiv1.SubmitRequest{}); !errors.As(err, &e) || e.Status != http.StatusUnauthorized {
			t.Fatalf("submit with token %q: %v", anon.Token(), err)
		}
		if _, err := anon.Login(ctx); !errors.As(err, &e) || e.Status != http.StatusUnauthorized {
			t.Fatalf("login with token %q: %v", anon.Token(), err)
		}
	}
	if _, err := meshclient.New(srv.URL).Jobs(ctx); err != nil {
		t.Fatalf("a loopback read without the token: %v", err)
	}
	l, err := c.Login(ctx)
	if err != nil || !strings.HasPrefix(l.URL, srv.URL+"/ui/#login=") || !strings.HasSuffix(l.URL, l.Code) || !l.Expires.After(time.Now()) {
		t.Fatalf("login %+v (%v)", l, err)
	}
}

func TestNotRunning(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	if _, err := meshclient.New(url).Peers(context.Background()); !errors.Is(err, meshclient.ErrNotRunning) {
		t.Fatalf("a stopped node: %v", err)
	}
}

func TestForRepo(t *testing.T) {
	dir := t.TempDir()
	if _, err := meshclient.ForRepo(dir); !errors.Is(err, meshclient.ErrNoRepo) {
		t.Fatalf("no repo: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := meshclient.ForRepo(dir); !errors.Is(err, meshclient.ErrNotRunning) {
		t.Fatalf("no daemon: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "api"), []byte("127.0.0.1:5001\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := meshclient.ForRepo(dir)
	if err != nil || c.BaseURL() != "http://127.0.0.1:5001" || c.Token() != "" {
		t.Fatalf("client of a repo without a token %v (%v)", c, err)
	}
	// The token is the one the node writes, read from the file it names.
	tok := strings.Repeat("ab", 32)
	if err := os.WriteFile(filepath.Join(dir, node.APITokenFile), []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if nt, err := node.ReadAPIToken(dir); err != nil || nt != tok {
		t.Fatalf("the node reads %q (%v)", nt, err)
	}
	c, err = meshclient.ForRepo(dir)
	if err != nil || c.Token() != tok {
		t.Fatalf("client token %q (%v), want the repo's", c.Token(), err)
	}
	if c, _ := meshclient.ForRepo(dir, meshclient.WithToken("other")); c.Token() != "other" {
		t.Fatalf("an option after the repo's token: %q", c.Token())
	}
}

func TestDone(t *testing.T) {
	for _, tc := range []struct {
		state  apiv1.JobState
		escrow string
		done   bool
	}{
		{apiv1.JobRunning, "", false},
		{apiv1.JobVerified, "", true},
		{apiv1.JobVerified, "0x01", false},
		{apiv1.JobSettled, "0x01", true},
		{apiv1.JobCancelled, "", true},
		{apiv1.JobRefunded, "0x01", true},
	} {
		if got := meshclient.Done(apiv1.Job{State: tc.state}, tc.escrow); got != tc.done {
			t.Errorf("Done(%s, escrow %q) = %v", tc.state, tc.escrow, got)
		}
	}
}

// TestLight: the SDK imports the standard library and apiv1 only, so a
// DApp does not pull in the node.
func TestLight(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		first, _, _ := strings.Cut(imp, "/")
		if strings.Contains(first, ".") && imp != "github.com/jobmesh/jobmesh/apiv1" {
			t.Errorf("meshclient imports %s", imp)
		}
	}
}
