package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
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
// a Mesh's error as 500; a store (which every API reads jobs from) but no
// node is needed for that.
func TestMeshReadsAsGiven(t *testing.T) {
	kickedAt := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	mesh := fakeMesh{
		nodes: []apiv1.Node{{PeerID: "p1", Role: "processor", CardModel: "cpu", CPUs: 2, Models: []string{}, Addrs: []string{}}},
		dispatch: api.DispatchNodes{Live: 2, Tasks: 3, TimeoutWindow: 3, Processors: []api.DispatchNode{
			{PeerID: "p1", StakeWei: "1", QoS: 0.75, VRAMScore: 1, TimeoutScore: 0.5, SpeedScore: 0.75, Weight: 0.5, Timeouts: 1},
			{PeerID: "p2", StakeWei: "1", QoS: 0.25, SpeedScore: 0.25, Kicked: "timeouts", KickedAt: &kickedAt, Timeouts: 2},
		}},
		queue: api.Queue{Live: 1, Cap: 2, Groups: []api.QueueGroup{{Label: "cpu", Jobs: []api.QueueJob{{ID: "j1", PriceWei: "7", Value: "1.500000"}}}}},
	}
	store := crdttest.New(t, crdttest.Options{Replicas: 1}).Replicas[0].Store
	serve := func(m api.Mesh) *meshclient.Client {
		srv := httptest.NewServer(api.NewHandler(api.Deps{Store: store, Metrics: prometheus.NewRegistry(), Mesh: m}, api.DefaultConfig()))
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

// TestDispatchNodeJSON: a processor's QoS parts, its kick and the
// timeouts in its window encode under the API's snake_case names; a
// processor that is not kicked has neither kicked nor kicked_at.
func TestDispatchNodeJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	kicked := api.DispatchNode{PeerID: "p", QoS: 0.5, VRAMScore: 1, TimeoutScore: 0.25, SpeedScore: 0.125, Kicked: "timeouts", KickedAt: &at, Timeouts: 2}
	b, err := json.Marshal(kicked)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"peer_id":"p","card_model":"","vram_mib":0,"wallet":"","stake_wei":"","qos":0.5,"vram_score":1,"timeout_score":0.25,` +
		`"speed_score":0.125,"weight":0,"kicked":"timeouts","kicked_at":"2026-01-02T03:04:05Z","timeouts":2}`
	if string(b) != want {
		t.Errorf("kicked processor:\n%s\nwant\n%s", b, want)
	}
	b, err = json.Marshal(api.DispatchNodes{Live: 1, TimeoutWindow: 3, Processors: []api.DispatchNode{{PeerID: "q"}}})
	if err != nil {
		t.Fatal(err)
	}
	want = `{"live":1,"tasks":0,"timeout_window":3,"processors":[{"peer_id":"q","card_model":"","vram_mib":0,"wallet":"",` +
		`"stake_wei":"","qos":0,"vram_score":0,"timeout_score":0,"speed_score":0,"weight":0,"timeouts":0}]}`
	if string(b) != want {
		t.Errorf("view:\n%s\nwant\n%s", b, want)
	}
}
