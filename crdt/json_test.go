package crdt_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
)

func TestJSONHelpers(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 1})
	s := c.Replicas[0].Store
	ctx := context.Background()
	type node struct {
		VRAM  int    `json:"vram"`
		Model string `json:"model"`
	}
	in := node{VRAM: 24, Model: "RTX 4090"}
	if err := crdt.PutJSON(ctx, s, "/nodes/a", "node", in); err != nil {
		t.Fatal(err)
	}
	out, rec, err := crdt.GetJSON[node](ctx, s, "/nodes/a", "node")
	if err != nil || out != in || rec.Author != s.Self() {
		t.Fatalf("GetJSON: %+v %+v %v", out, rec, err)
	}
	if _, _, err := crdt.GetJSON[node](ctx, s, "/nodes/a", "job"); !errors.Is(err, crdt.ErrWrongType) {
		t.Fatalf("wrong type: %v", err)
	}
	if _, _, err := crdt.GetJSON[node](ctx, s, "/nodes/missing", "node"); !errors.Is(err, crdt.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
}
