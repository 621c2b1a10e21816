package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/jobstore"
	"github.com/jobmesh/jobmesh/records"
)

func withRooms(jc *jobstore.Config) { jc.Rooms = true }

// roomRouters returns a Router with room stores over each replica of c.
func roomRouters(t *testing.T, c *crdttest.Cluster, clk *clock) ([]*jobstore.Router, []*jobstore.Manager) {
	t.Helper()
	var rs []*jobstore.Router
	var ms []*jobstore.Manager
	for i, r := range c.Replicas {
		m := managerWith(t, c, i, clk, withRooms)
		ms = append(ms, m)
		rs = append(rs, jobstore.NewRouter(r.Store, m))
	}
	return rs, ms
}

// TestRoomRecordsStayInTheRoomUntilCarried: with room stores, a member's
// took record and commitment go to its MacroJob's room store: another
// member reads them, a node of the job outside the room does not, until
// an aggregate in the job store carries them; the member then reads the
// record once. A record of another MacroJob is refused by the room store,
// on write and from a peer on its topic.
// A restart reopens the room store with its records, and the job's drop
// deletes it with the job's store.
func TestRoomRecordsStayInTheRoomUntilCarried(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 3, Configure: func(_ int, cfg *crdt.Config) {
		cfg.AuthorPolicy = records.AuthorPolicy()
	}})
	clk := &clock{now: time.Unix(1e9, 0)}
	ctx := context.Background()
	a := jobID("a")
	rs, ms := roomRouters(t, c, clk)
	p0 := c.Replicas[0].ID().String()
	for i := range 3 {
		if err := rs[i].Join(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if err := rs[1].JoinRoom(ctx, a, 2); err != nil {
		t.Fatal(err)
	}
	took := records.TookKey(a, 2, p0)
	commit := records.Key{Type: records.CommitType, Job: a, Macro: 2, Micro: jobID("m"), Peer: p0}.String()
	lock := records.RoomLockKey(a.String(), 2)
	if err := rs[0].PutBatch(ctx, []crdt.Entry{
		{Key: took, Type: records.TookType}, {Key: commit, Type: records.CommitType, Payload: []byte("c")},
		{Key: lock, Type: records.RoomLockType, Payload: []byte("{}")},
	}); err != nil {
		t.Fatal(err)
	}
	if got := ms[0].RoomsOf(a); !slices.Equal(got, []uint64{2}) {
		t.Fatalf("the writer holds rooms %v, want [2]", got)
	}
	for _, k := range []string{took, commit, lock} {
		crdttest.WaitUntil(t, waitFor, func() error { _, err := rs[1].Get(ctx, k); return err })
	}
	// The room lock is the job's; the room's records are not.
	crdttest.WaitUntil(t, waitFor, func() error { _, err := rs[2].Get(ctx, lock); return err })
	for _, k := range []string{took, commit} {
		if _, err := rs[2].Get(ctx, k); !errors.Is(err, crdt.ErrNotFound) {
			t.Fatalf("a node outside the room reads %s: %v", k, err)
		}
	}
	room, ok := ms[0].Room(a, 2)
	if !ok {
		t.Fatal("no room store")
	}
	if err := room.Put(ctx, records.TookKey(a, 3, p0), records.TookType, nil); !errors.Is(err, crdt.ErrPolicy) {
		t.Fatalf("a record of MacroJob 3 in MacroJob 2's room: %v", err)
	}
	// A peer on the room's topic without the policy puts another
	// MacroJob's record there: it arrives, and the members refuse it.
	cfg := c.Config(2)
	cfg.Namespace, cfg.Topic, cfg.Registerer = "/evil/room", jobstore.RoomTopic(a, 2), nil
	evil, err := crdt.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { evil.Close() })
	foreign := records.TookKey(a, 3, c.Replicas[2].ID().String())
	if err := evil.Put(ctx, foreign, records.TookType, nil); err != nil {
		t.Fatal(err)
	}
	member, _ := ms[1].Room(a, 2)
	crdttest.WaitUntil(t, waitFor, func() error {
		if _, err := member.Get(ctx, foreign); !errors.Is(err, jobstore.ErrForeignRecord) {
			return fmt.Errorf("the member reads %s: %v, want a refusal", foreign, err)
		}
		return nil
	})
	var envs [][]byte
	for _, k := range []string{took, commit} {
		env, err := room.Envelope(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, env)
	}
	payload, err := crdt.EncodeCarried(envs)
	if err != nil {
		t.Fatal(err)
	}
	if err := rs[0].Put(ctx, records.CommittedKey(a, 2, p0), records.CommittedType, payload); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{took, commit} {
		crdttest.WaitUntil(t, waitFor, func() error { _, err := rs[2].Get(ctx, k); return err })
	}
	if len(ms[2].RoomsOf(a)) != 0 {
		t.Fatal("reading carried records opened a room store")
	}
	// The writer reads each record once, from its room or carried.
	crdttest.WaitUntil(t, waitFor, func() error {
		recs, err := rs[0].Query(ctx, records.JobKey(a))
		if err != nil {
			return err
		}
		var keys []string
		for _, r := range recs {
			keys = append(keys, r.Key)
		}
		want := []string{commit, records.CommittedKey(a, 2, p0), lock, took}
		slices.Sort(want)
		if !slices.Equal(keys, want) {
			return fmt.Errorf("the writer reads %v, want %v", keys, want)
		}
		return nil
	})

	// A restart reopens the room store.
	if err := ms[1].Close(); err != nil {
		t.Fatal(err)
	}
	again := managerWith(t, c, 1, clk, withRooms)
	if _, err := again.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if got := again.RoomsOf(a); !slices.Equal(got, []uint64{2}) {
		t.Fatalf("after a restart the member holds rooms %v", got)
	}
	if r, ok := again.Room(a, 2); !ok {
		t.Fatal("room not reopened")
	} else if _, err := r.Get(ctx, commit); err != nil {
		t.Fatalf("the reopened room lost its record: %v", err)
	}
	// The job's drop takes its rooms.
	if err := again.End(ctx, a, clk.Now()); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Hour)
	if _, err := again.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if n := keysUnder(t, c, 1, jobstore.Namespace(a)); n != 0 {
		t.Fatalf("%d keys of job a left after the drop", n)
	}
	if len(again.RoomsOf(a)) != 0 {
		t.Fatal("a dropped job keeps its rooms")
	}
}
