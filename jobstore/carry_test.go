package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/jobstore"
	"github.com/jobmesh/jobmesh/records"
)

// roomStore opens, on replica i, a store of job id's records on a topic
// of its own, as the members of one MacroJob would: replicas that do not
// open it never receive its records.
func roomStore(t *testing.T, c *crdttest.Cluster, i int, id jobs.ID) *crdt.Store {
	t.Helper()
	cfg := c.Config(i)
	cfg.Namespace, cfg.Topic, cfg.Registerer = "/room/"+id.String(), "/room/"+id.String(), nil
	cfg.AuthorPolicy = jobstore.Policy(id, records.AuthorPolicy())
	s, err := crdt.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestAggregateBringsARoomsRecordsToTheJobStore: two members write their
// took records and commitments to a room's store; one of them carries
// them, as their authors signed them (a batch and a single record), in a
// committed aggregate in the job store. A replica of the job store that
// never held the room reads them with Get, Query and Watch; a record of
// another job that the aggregate carries too is refused and counted.
// Dropping the job store after its retention leaves no key of the
// carried records behind.
func TestAggregateBringsARoomsRecordsToTheJobStore(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 3})
	clk := &clock{now: time.Unix(1e9, 0)}
	ctx := context.Background()
	a, b := jobID("a"), jobID("b")
	room := []*crdt.Store{roomStore(t, c, 0, a), roomStore(t, c, 1, a)}
	other := roomStore(t, c, 0, b)
	p := []string{c.Replicas[0].ID().String(), c.Replicas[1].ID().String()}
	commit := func(m, peer string) string {
		return records.Key{Type: records.CommitType, Job: a, Macro: 2, Micro: jobID(m), Peer: peer}.String()
	}
	mine := []crdt.Entry{
		{Key: records.TookKey(a, 2, p[0]), Type: records.TookType},
		{Key: commit("m1", p[0]), Type: records.CommitType, Payload: []byte("c1")},
		{Key: commit("m2", p[0]), Type: records.CommitType, Payload: []byte("c2")},
	}
	if err := room[0].PutBatch(ctx, mine); err != nil {
		t.Fatal(err)
	}
	theirs := commit("m3", p[1])
	if err := room[1].Put(ctx, theirs, records.CommitType, []byte("c3")); err != nil {
		t.Fatal(err)
	}
	foreign := records.TookKey(b, 2, p[0])
	if err := other.Put(ctx, foreign, records.TookType, nil); err != nil {
		t.Fatal(err)
	}
	waitGet(t, room[0], theirs)
	inner := []string{mine[0].Key, mine[1].Key, mine[2].Key, theirs}
	var envs [][]byte
	for _, k := range inner {
		env, err := room[0].Envelope(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, env)
	}
	env, err := other.Envelope(ctx, foreign)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := crdt.EncodeCarried(append(envs, env))
	if err != nil {
		t.Fatal(err)
	}

	writer := manager(t, c, 0, clk)
	reg := prometheus.NewRegistry()
	reader := managerWith(t, c, 2, clk, func(jc *jobstore.Config) { jc.Registerer = reg })
	rs, err := reader.Open(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	watch := rs.Watch(ctx, records.JobKey(a)+"/macro/2")
	ws, err := writer.Open(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Put(ctx, records.CommittedKey(a, 2, p[0]), records.CommittedType, payload); err != nil {
		t.Fatal(err)
	}
	for i, k := range inner {
		r := waitGet(t, rs, k)
		if want := c.Replicas[min(i/3, 1)].ID(); r.Author != want {
			t.Fatalf("%s read with author %s, want %s", k, r.Author, want)
		}
	}
	recs, err := rs.Query(ctx, records.JobKey(a))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range recs {
		keys = append(keys, r.Key)
	}
	want := append([]string{records.CommittedKey(a, 2, p[0])}, inner...)
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Fatalf("the job store reads %v, want %v", keys, want)
	}
	seen := map[string]bool{}
	for len(seen) < len(inner) {
		select {
		case ch := <-watch:
			if slices.Contains(inner, ch.Key) {
				seen[ch.Key] = true
			}
		case <-time.After(waitFor):
			t.Fatalf("watch saw %d of %d carried records", len(seen), len(inner))
		}
	}
	if _, err := rs.Get(ctx, foreign); err == nil {
		t.Fatal("the job store of job a reads a record of job b")
	}
	crdttest.WaitUntil(t, waitFor, func() error {
		if n := crdttest.Metric(t, reg, "jobmesh_jobstore_refused_total", nil); n != 1 {
			return fmt.Errorf("refused %v, want 1", n)
		}
		return nil
	})

	if err := reader.End(ctx, a, clk.Now()); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Hour)
	if dropped, err := reader.Sweep(ctx); err != nil || len(dropped) != 1 {
		t.Fatalf("Sweep dropped %v, %v", dropped, err)
	}
	if n := keysUnder(t, c, 2, jobstore.Namespace(a)); n != 0 {
		t.Fatalf("%d keys of job a left after the drop", n)
	}
	if _, err := rs.Get(ctx, inner[0]); !errors.Is(err, crdt.ErrClosed) {
		t.Fatalf("a dropped store reads %v", err)
	}
}
