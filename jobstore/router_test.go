package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/jobstore"
	"github.com/jobmesh/jobmesh/records"
)

// TestRouterKeepsBystandersOut: two replicas that write a job's records
// share them through the job's store; a third, which takes no part,
// reads the mesh's records of the job and none of the job's own, and
// stores nothing under the job's namespace.
func TestRouterKeepsBystandersOut(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 3, Configure: func(_ int, cfg *crdt.Config) {
		cfg.AuthorPolicy = records.AuthorPolicy()
	}})
	clk := &clock{now: time.Unix(1e9, 0)}
	ctx := context.Background()
	a := jobID("a")
	var rs []*jobstore.Router
	for i, r := range c.Replicas {
		rs = append(rs, jobstore.NewRouter(r.Store, manager(t, c, i, clk)))
	}
	// Mesh level: every replica reads it.
	advert := records.AdvertKey(c.Replicas[0].ID().String())
	if err := rs[0].Put(ctx, advert, records.AdvertType, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	// Job level: replicas 0 and 1 take part.
	took0, took1 := tookKey(a, c.Replicas[0], 0), tookKey(a, c.Replicas[1], 1)
	if err := rs[0].PutBatch(ctx, []crdt.Entry{{Key: took0, Type: records.TookType}}); err != nil {
		t.Fatal(err)
	}
	if err := rs[1].Put(ctx, took1, records.TookType, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		crdttest.WaitUntil(t, waitFor, func() error {
			recs, err := rs[i].Query(ctx, records.JobKey(a)+"/")
			if err != nil || len(recs) != 2 || recs[0].Key > recs[1].Key {
				return fmt.Errorf("replica %d reads %d of the job's 2 records (%v)", i, len(recs), err)
			}
			return nil
		})
	}
	for i := range 3 {
		crdttest.WaitUntil(t, waitFor, func() error {
			_, err := rs[i].Get(ctx, advert)
			return err
		})
	}
	// The bystander: nothing of the job's own.
	if _, err := rs[2].Get(ctx, took0); !errors.Is(err, crdt.ErrNotFound) {
		t.Fatalf("bystander read a job record: %v", err)
	}
	if recs, err := rs[2].Query(ctx, records.JobKey(a)+"/"); err != nil || len(recs) != 0 {
		t.Fatalf("bystander queried %d records of the job (%v)", len(recs), err)
	}
	if n := keysUnder(t, c, 2, jobstore.Namespace(a)); n != 0 {
		t.Fatalf("bystander stores %d keys of the job", n)
	}
	if recs, err := c.Replicas[2].Store.Query(ctx, records.JobKey(a)); err != nil || len(recs) != 0 {
		t.Fatalf("the mesh store holds %d of the job's records (%v)", len(recs), err)
	}
}
