package api_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/meshclient"
)

// fakeMesh answers the mesh reads with fixed values, or err.
type fakeMesh struct {
	nodes    []apiv1.Node
	dispatch api.DispatchNodes
	queue    api.Queue
	err      error
}

func (f fakeMesh) Processors(context.Context) ([]apiv1.Node, error)    { return f.nodes, f.err }
func (f fakeMesh) Dispatch(context.Context) (api.DispatchNodes, error) { return f.dispatch, f.err }
func (f fakeMesh) Queue(context.Context) (api.Queue, error)            { return f.queue, f.err }

// TestMeshReadsAsGiven: the API serves what its Mesh answers as it is, and
// a Mesh's error as 500; no node is needed for that.
func TestMeshReadsAsGiven(t *testing.T) {
	mesh := fakeMesh{
		nodes:    []apiv1.Node{{PeerID: "p1", Role: "processor", CardModel: "cpu", CPUs: 2, Models: []string{}, Addrs: []string{}}},
		dispatch: api.DispatchNodes{Live: 1, Tasks: 3, Processors: []api.DispatchNode{{PeerID: "p1", StakeWei: "1", Weight: 0.5}}},
		queue:    api.Queue{Live: 1, Cap: 2, Groups: []api.QueueGroup{{Label: "cpu", Jobs: []api.QueueJob{{ID: "j1", PriceWei: "7", Value: "1.500000"}}}}},
	}
	serve := func(m api.Mesh) *meshclient.Client {
		srv := httptest.NewServer(api.NewHandler(api.Deps{Metrics: prometheus.NewRegistry(), Mesh: m}, api.DefaultConfig()))
		t.Cleanup(srv.Close)
		return meshclient.New(srv.URL)
	}
	c, ctx := serve(mesh), context.Background()
	nodes, err := c.Nodes(ctx)
	if err != nil || !reflect.DeepEqual(nodes, mesh.nodes) {
		t.Fatalf("nodes %+v (%v), want %+v", nodes, err, mesh.nodes)
	}
	dn, err := c.DispatchNodes(ctx)
	if err != nil || !reflect.DeepEqual(dn, mesh.dispatch) {
		t.Fatalf("dispatch %+v (%v), want %+v", dn, err, mesh.dispatch)
	}
	q, err := c.Queue(ctx)
	if err != nil || !reflect.DeepEqual(q, mesh.queue) {
		t.Fatalf("queue %+v (%v), want %+v", q, err, mesh.queue)
	}

	broken := serve(fakeMesh{err: errors.New("no view")})
	var e *meshclient.Error
	if _, err := broken.Queue(ctx); !errors.As(err, &e) || e.Status != http.StatusInternalServerError {
		t.Fatalf("a failing mesh: %v, want a 500", err)
	}
}
