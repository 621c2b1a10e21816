package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshclient"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/node"
)

// nodeHandler is the API of n with its [api] section and a fresh token.
func nodeHandler(n *node.Node) *api.Handler {
	return api.NewHandler(n.APIDeps(), n.Config.API)
}

func TestEndpoints(t *testing.T) {
	m := meshtest.New(t, localmesh.Options{Processors: 2})
	boot := m.Members[0]
	srv := httptest.NewServer(nodeHandler(boot.Node))
	defer srv.Close()
	c := meshclient.New(srv.URL)
	ctx := context.Background()

	id, err := c.ID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if id.PeerID != boot.Host.ID().String() || id.Role != "bootstrap" || len(id.Addrs) == 0 {
		t.Fatalf("id: %+v", id)
	}
	for _, a := range id.Addrs {
		if !strings.HasSuffix(a, "/p2p/"+id.PeerID) {
			t.Fatalf("address %s is not a full multiaddr", a)
		}
	}
	wait.Until(t, 30*time.Second, func() error {
		peers, err := c.Peers(ctx)
		if err != nil {
			return err
		}
		nodes, err := c.Nodes(ctx)
		if err != nil {
			return err
		}
		if len(peers) < 2 || len(nodes) != 2 {
			return fmt.Errorf("%d peers, %d processors", len(peers), len(nodes))
		}
		return nil
	})

	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, metric := range []string{"jobmesh_crdt_records_put_total", "jobmesh_ipfs_provides_total", "go_goroutines"} {
		if !strings.Contains(string(body), metric) {
			t.Errorf("/metrics lacks %s", metric)
		}
	}

	// Unknown endpoints and wrong methods get a JSON error.
	for _, req := range []struct{ method, path string }{{"GET", "/v1/nothing"}, {"POST", "/v1/id"}} {
		r, _ := http.NewRequest(req.method, srv.URL+req.path, nil)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		var e api.Error
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Error == "" || resp.StatusCode < 400 {
			t.Fatalf("%s %s: status %d, body error %q (%v)", req.method, req.path, resp.StatusCode, e.Error, err)
		}
		resp.Body.Close()
	}
}

func TestClientReportsDaemonDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.Listener.Addr().String()
	srv.Close()
	_, err := meshclient.New(addr).ID(context.Background())
	if err == nil || !strings.Contains(err.Error(), "daemon") {
		t.Fatalf("got %v", err)
	}
}
