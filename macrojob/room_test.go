package macrojob

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/ipfs"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/p2p/p2ptest"
	"github.com/jobmesh/jobmesh/records"
)

type testNode struct {
	host  *p2p.Host
	store *crdt.Store
}

// testNodes starts n connected hosts, each with a real bitswap block layer
// and replicated store.
func testNodes(t testing.TB, n int) []testNode {
	t.Helper()
	var out []testNode
	for _, h := range testHosts(t, n) {
		dstore := dssync.MutexWrap(ds.NewMapDatastore())
		blocks, err := ipfs.New(context.Background(), ipfs.Params{Config: ipfs.DefaultConfig(), Host: h, Routing: h.DHT, Datastore: dstore})
		if err != nil {
			t.Fatal(err)
		}
		cfg := crdt.DefaultConfig()
		cfg.Datastore, cfg.DAGService, cfg.PubSub = dstore, blocks.DAGService(), h.PubSub
		cfg.PrivKey = h.Peerstore().PrivKey(h.ID())
		cfg.Logger = slog.New(slog.DiscardHandler)
		cfg.RebroadcastInterval = 300 * time.Millisecond
		st, err := crdt.New(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close(); blocks.Close() })
		out = append(out, testNode{host: h, store: st})
	}
	return out
}

func testHosts(t testing.TB, n int) []*p2p.Host { return p2ptest.Hosts(t, n) }

// joinRooms has every node join room 0 of "job1" with items, creator
// owning it first; the rooms close when the test ends.
func joinRooms(ctx context.Context, t *testing.T, nodes []testNode, items []ID, creator PeerID, cfg RoomConfig) []*Room {
	t.Helper()
	return joinRoomsSettled(ctx, t, nodes, items, creator, cfg, nil)
}

// joinRoomsSettled is joinRooms with settled, when not nil, called with
// a node's index as its room's Settled callback.
func joinRoomsSettled(ctx context.Context, t *testing.T, nodes []testNode, items []ID, creator PeerID, cfg RoomConfig, settled func(i int)) []*Room {
	t.Helper()
	var rooms []*Room
	for i, n := range nodes {
		p := RoomParams{Host: n.host, Store: n.store, JobID: "job1", Macro: 0, Items: items, Creator: creator}
		if settled != nil {
			p.Settled = func() { settled(i) }
		}
		r, err := JoinRoom(ctx, p, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		rooms = append(rooms, r)
	}
	return rooms
}

// work takes MicroJobs from node i's room r, calls got with each and
// completes it, until the room is done.
func work(ctx context.Context, t *testing.T, i int, r *Room, got func(ID)) {
	for {
		id, err := r.Next(ctx)
		if errors.Is(err, ErrRoomDone) {
			return
		}
		if err != nil {
			t.Errorf("node %d: %v", i, err)
			return
		}
		got(id)
		if err := r.Complete(ctx, id); err != nil {
			t.Errorf("node %d: complete: %v", i, err)
			return
		}
	}
}

func TestRoomSharesWorkOverGossipsub(t *testing.T) {
	nodes := testNodes(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	items := []ID{"m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7"}
	creator := PeerID(nodes[0].host.ID().String())
	cfg := RoomConfig{Queue: Config{ProcessingTimeout: 10 * time.Second, OwnerTimeout: 2 * time.Second, Rebroadcast: 200 * time.Millisecond}, LockTTL: time.Minute}
	rooms := joinRooms(ctx, t, nodes, items, creator, cfg)
	var mu sync.Mutex
	byNode := map[int][]ID{}
	var wg sync.WaitGroup
	// Every node holds its first MicroJob until all three hold one: the
	// queue must hand ownership around while its owner is busy.
	var first sync.WaitGroup
	first.Add(len(rooms))
	for i, r := range rooms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(ctx, t, i, r, func(id ID) {
				mu.Lock()
				byNode[i] = append(byNode[i], id)
				n := len(byNode[i])
				mu.Unlock()
				if n == 1 {
					first.Done()
					first.Wait()
				}
			})
		}()
	}
	wg.Wait()
	seen := map[ID]int{}
	for _, ids := range byNode {
		for _, id := range ids {
			seen[id]++
		}
	}
	for _, id := range items {
		if seen[id] == 0 {
			t.Fatalf("%s never processed; by node: %v", id, byNode)
		}
	}
	wait.Until(t, 10*time.Second, func() error {
		for i, r := range rooms {
			if !r.Done() {
				return fmt.Errorf("room of node %d not done", i)
			}
		}
		return nil
	})
	owners := map[PeerID]bool{}
	for _, r := range rooms {
		o, err := r.Owner(ctx)
		if err != nil {
			t.Fatal(err)
		}
		owners[o] = true
	}
	if len(owners) != 1 {
		t.Fatalf("rooms disagree on the owner: %v", owners)
	}
	if len(byNode) != 3 {
		t.Fatalf("work was not shared: %v", byNode)
	}
	// The creator's room lock reached every replica.
	wait.Until(t, 10*time.Second, func() error {
		for i, n := range nodes {
			l, ok := records.ReadRoomLock(ctx, n.store, "job1", 0)
			if !ok || l.Owner != string(creator) || l.Open(time.Now()) {
				return fmt.Errorf("node %d: room lock %+v %v", i, l, ok)
			}
		}
		return nil
	})
}

// TestRoomBatchesHandOutWholeTurns: with MaxLocksPerTurn 3, NextBatch
// returns an owner's whole grab at once and CompleteAll completes it; the
// members between them process every MicroJob, none twice.
func TestRoomBatchesHandOutWholeTurns(t *testing.T) {
	nodes := testNodes(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	items := []ID{"m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9", "m10"}
	creator := PeerID(nodes[0].host.ID().String())
	cfg := RoomConfig{Queue: Config{MaxLocksPerTurn: 3, ProcessingTimeout: 10 * time.Second, OwnerTimeout: 2 * time.Second, Rebroadcast: 200 * time.Millisecond}, LockTTL: time.Minute}
	rooms := joinRooms(ctx, t, nodes, items, creator, cfg)
	// The creator owns the queue: its first batch is a whole grab.
	batch, err := rooms[0].NextBatch(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(batch) != 3 {
		t.Fatalf("the owner's first batch holds %d MicroJobs, want its grab of 3: %v", len(batch), batch)
	}
	if err := rooms[0].CompleteAll(ctx, batch); err != nil {
		t.Fatal(err)
	}
	seen, _ := workRooms(ctx, t, rooms, 5, func(i int, ids []ID) {
		if len(ids) > 3 {
			t.Errorf("node %d: a batch of %d exceeds the turn's 3", i, len(ids))
		}
	})
	for _, id := range batch {
		seen[id]++
	}
	for _, id := range items {
		if seen[id] != 1 {
			t.Fatalf("%s processed %d times: %v", id, seen[id], seen)
		}
	}
}

// TestLoneRoomPublishesNothingAndALateMemberCatchesUp: a room whose
// channel has no other member publishes no snapshots (they would reach
// nobody); a member that joins later still gets the queue
// (the owner's re-broadcast, or its answer to the Request) and its share
// of the work, and every MicroJob is processed once.
func TestLoneRoomPublishesNothingAndALateMemberCatchesUp(t *testing.T) {
	nodes := testNodes(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	items := []ID{"m0", "m1", "m2", "m3", "m4", "m5"}
	creator := PeerID(nodes[0].host.ID().String())
	cfg := RoomConfig{Queue: Config{MaxLocksPerTurn: 2, ProcessingTimeout: 10 * time.Second, OwnerTimeout: 2 * time.Second, Rebroadcast: 200 * time.Millisecond}, LockTTL: time.Minute}
	met, err := NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := JoinRoom(ctx, RoomParams{Host: nodes[0].host, Store: nodes[0].store, JobID: "job1", Items: items, Creator: creator, Metrics: met}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close()
	first, err := alone.NextBatch(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := alone.CompleteAll(ctx, first); err != nil {
		t.Fatal(err)
	}
	unsent := func() float64 { return testutil.ToFloat64(met.events.WithLabelValues("unsent")) }
	wait.Until(t, 10*time.Second, func() error {
		if unsent() == 0 {
			return errors.New("the lone owner's snapshots were not left unsent")
		}
		return nil
	})
	late, err := JoinRoom(ctx, RoomParams{Host: nodes[1].host, Store: nodes[1].store, JobID: "job1", Items: items, Creator: creator}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	held := false
	seen, byRoom := workRooms(ctx, t, []*Room{alone, late}, 1, func(i int, ids []ID) {
		// The owner holds its first MicroJob after the late join until
		// ownership has passed to the late member, which happens only
		// once the late member's Request arrived.
		if i != 0 || held {
			return
		}
		held = true
		if err := wait.For(20*time.Second, func() error {
			if o, err := alone.Owner(ctx); err == nil && o == creator {
				return errors.New("ownership has not passed to the late member")
			}
			return nil
		}); err != nil {
			t.Error(err)
		}
	})
	for _, id := range first {
		seen[id]++
	}
	for _, id := range items {
		if seen[id] != 1 {
			t.Errorf("%s processed %d times, want once", id, seen[id])
		}
	}
	if byRoom[1] == 0 {
		t.Error("the member that joined late got no work")
	}
}

// workRooms has every room take batches of up to max MicroJobs and
// complete them until its queue is done; each batch goes to hold (room
// index, ids) before it is completed. It returns how often each MicroJob
// was taken, and how many each room took.
func workRooms(ctx context.Context, t *testing.T, rooms []*Room, max int, hold func(i int, ids []ID)) (map[ID]int, []int) {
	t.Helper()
	var mu sync.Mutex
	seen, byRoom := map[ID]int{}, make([]int, len(rooms))
	var wg sync.WaitGroup
	for i, r := range rooms {
		wg.Go(func() {
			for {
				ids, err := r.NextBatch(ctx, max)
				if errors.Is(err, ErrRoomDone) {
					return
				}
				if err != nil {
					t.Errorf("room %d: %v", i, err)
					return
				}
				mu.Lock()
				for _, id := range ids {
					seen[id]++
				}
				byRoom[i] += len(ids)
				mu.Unlock()
				hold(i, ids)
				if err := r.CompleteAll(ctx, ids); err != nil {
					t.Errorf("room %d: complete: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return seen, byRoom
}

// TestAskAfterCloseDoesNotHang: a question or a completion given to a
// room whose loop stopped before running it (the command was queued as the
// room closed) answers ErrRoomClosed instead of waiting for good.
func TestAskAfterCloseDoesNotHang(t *testing.T) {
	r := &Room{cmds: make(chan func(time.Time) []Msg, 64), done: make(chan struct{})}
	close(r.done) // the loop is gone; the command channel still has room
	calls := []func() error{
		func() error { _, err := r.Stats(context.Background()); return err },
		func() error { _, err := r.Owner(context.Background()); return err },
		func() error { return r.Complete(context.Background(), "m") },
		func() error { return r.CompleteAll(context.Background(), []ID{"m"}) },
		func() error {
			if r.holds(context.Background(), "m") {
				return errors.New("a closed room holds a lock")
			}
			return ErrRoomClosed
		},
	}
	for i := range 40 {
		res := make(chan error, 1)
		go func() { res <- calls[i%len(calls)]() }()
		select {
		case err := <-res:
			if !errors.Is(err, ErrRoomClosed) {
				t.Fatalf("ask %d: %v, want ErrRoomClosed", i, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("ask %d of a closed room still waiting after 10s", i)
		}
	}
}

// TestFinishedRoom: once a room's queue is done, with every result
// acknowledged, its members are finished with it (the processor leaves
// it), and its owner is not yet: it stays a LockTTL to answer processors
// that join from a lagging store. The owner alone is told, once, that it
// speaks for the done room (Settled).
func TestFinishedRoom(t *testing.T) {
	nodes := testNodes(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	items := []ID{"m0", "m1", "m2", "m3", "m4", "m5"}
	creator := PeerID(nodes[0].host.ID().String())
	cfg := RoomConfig{Queue: Config{ProcessingTimeout: 10 * time.Second, OwnerTimeout: 2 * time.Second, Rebroadcast: 200 * time.Millisecond}, LockTTL: time.Hour}
	var smu sync.Mutex
	settled := make([]int, len(nodes))
	rooms := joinRoomsSettled(ctx, t, nodes, items, creator, cfg, func(i int) {
		smu.Lock()
		settled[i]++
		smu.Unlock()
	})
	var wg sync.WaitGroup
	for i, r := range rooms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(ctx, t, i, r, func(id ID) {
				if r.Finished() {
					t.Errorf("node %d: finished while it holds %s", i, id)
				}
			})
		}()
	}
	wg.Wait()
	owner := -1
	wait.Until(t, 10*time.Second, func() error {
		owner = -1
		for i, r := range rooms {
			o, err := r.Owner(ctx)
			if err != nil {
				return err
			}
			if o == PeerID(nodes[i].host.ID().String()) {
				owner = i
				continue
			}
			if !r.Finished() {
				return fmt.Errorf("member %d not finished with the done room", i)
			}
		}
		if owner < 0 {
			return errors.New("no member owns the queue")
		}
		return nil
	})
	if rooms[owner].Finished() {
		t.Fatalf("the owner (node %d) is finished within its LockTTL", owner)
	}
	wait.Until(t, 10*time.Second, func() error {
		smu.Lock()
		told := slices.Clone(settled)
		smu.Unlock()
		if told[owner] > 0 {
			return nil
		}
		// Read after the lock: a room calls Settled on its own
		// goroutine, which Owner waits for.
		var state []string
		for i, r := range rooms {
			o, err := r.Owner(ctx)
			state = append(state, fmt.Sprintf("node %d: owner %s (%v), finished %v, told %d", i, o, err, r.Finished(), told[i]))
		}
		return fmt.Errorf("the owner (node %d) not told it speaks for the done room; %s", owner, strings.Join(state, "; "))
	})
	// A few more rounds of the rooms' loops: nobody is told again.
	for range 3 {
		for _, r := range rooms {
			if _, err := r.Owner(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	smu.Lock()
	defer smu.Unlock()
	for i, n := range settled {
		if want := map[bool]int{true: 1}[i == owner]; n != want {
			t.Errorf("node %d told %d times that it speaks for the room, want %d (owner: node %d)", i, n, want, owner)
		}
	}
}

// TestLockKeptWhenTheWaitEnds: MicroJobs the queue locked for this node
// that wait in the room when the node's wait for them ends (its context
// cancelled, as the worker's wait is when a job's state changes) are
// handed to its next call, not dropped: a dropped lock would stay unrun
// until its ProcessingTimeout.
func TestLockKeptWhenTheWaitEnds(t *testing.T) {
	nodes := testNodes(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	items := []ID{"m0", "m1", "m2", "m3"}
	cfg := RoomConfig{Queue: Config{MaxLocksPerTurn: 2, ProcessingTimeout: time.Hour, OwnerTimeout: 2 * time.Second, Rebroadcast: 200 * time.Millisecond}, LockTTL: time.Minute}
	r, err := JoinRoom(ctx, RoomParams{Host: nodes[0].host, Store: nodes[0].store, JobID: "job1", Items: items, Creator: PeerID(nodes[0].host.ID().String())}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// A request whose grant arrives after the wait for it ended.
	if err := r.do(ctx, func(now time.Time) []Msg { return r.q.RequestUpTo(now, 2) }); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 10*time.Second, func() error {
		if n := len(r.ready); n < 2 {
			return fmt.Errorf("%d MicroJobs locked for this node, want 2", n)
		}
		return nil
	})
	ended, end := context.WithCancel(ctx)
	end()
	if _, err := r.NextBatch(ended, 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("a call whose wait ended: %v, want context.Canceled", err)
	}
	got, err := r.NextBatch(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, []ID{"m0", "m1"}) {
		t.Fatalf("the next call got %v, want the two MicroJobs locked before: m0 and m1", got)
	}
}
