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

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshclient"
	"github.com/jobmesh/jobmesh/meshtest"
)

// TestErrorsKeepStatusAndMessage: the API's answers reach the caller as
// *Error with their status and message.
func TestErrorsKeepStatusAndMessage(t *testing.T) {
	m := meshtest.New(t, localmesh.Options{Processors: 1})
	srv := httptest.NewServer(api.NewHandler(m.Bootstrap().Node))
	defer srv.Close()
	c := meshclient.New(srv.URL)
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
	if err != nil || c.BaseURL() != "http://127.0.0.1:5001" {
		t.Fatalf("client %v (%v)", c, err)
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
