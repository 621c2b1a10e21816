package crdt

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	dstest "github.com/ipfs/boxo/ipld/merkledag/test"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
)

// dagBlocks answers LocalBlocks from an offline DAG service: a block is
// local when the service has it.
type dagBlocks struct{ dag ipld.DAGService }

func (d dagBlocks) Has(ctx context.Context, c cid.Cid) (bool, error) {
	_, err := d.dag.Get(ctx, c)
	if ipld.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// awaitFixture is an awaitDAG over an offline DAG service (a block that
// is not local is not found: the "network" has nothing), and a
// broadcaster that stores broadcast blocks in the same service and tells
// the awaitDAG, as Store wires them.
type awaitFixture struct {
	dag     *awaitDAG
	bcast   *broadcaster
	mu      sync.Mutex
	awaited map[string]int
}

func newAwaitFixture(wait time.Duration) *awaitFixture {
	f := &awaitFixture{awaited: map[string]int{}}
	inner := dstest.Mock()
	f.dag = newAwaitDAG(inner, dagBlocks{inner}, wait, func(o string) {
		f.mu.Lock()
		f.awaited[o]++
		f.mu.Unlock()
	})
	f.bcast = &broadcaster{queued: map[cid.Cid]time.Time{}, now: time.Now, dag: inner, stored: f.dag.stored, log: slog.New(slog.DiscardHandler)}
	return f
}

// check asserts how the awaited blocks came, and that no walk is left
// registered as waiting.
func (f *awaitFixture) check(t *testing.T, broadcast, network int) {
	t.Helper()
	if b, n := f.counts(); b != broadcast || n != network {
		t.Errorf("awaited: %d by broadcast, %d from the network; want %d and %d", b, n, broadcast, network)
	}
	if n := f.waiters(); n != 0 {
		t.Errorf("%d waiters left", n)
	}
}

func (f *awaitFixture) counts() (broadcast, network int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.awaited["broadcast"], f.awaited["network"]
}

func (f *awaitFixture) waiters() int {
	f.dag.mu.Lock()
	defer f.dag.mu.Unlock()
	return len(f.dag.waiters)
}

// TestAwaitDAGTakesBlockFromBroadcast: a walk that needs a block which is
// not local waits, and a broadcast that brings the block within the wait
// ends the wait at once, without asking the network.
func TestAwaitDAGTakesBlockFromBroadcast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAwaitFixture(time.Second)
		blk := testBlock("a child delta")
		type got struct {
			nd  ipld.Node
			err error
			at  time.Duration
		}
		done := make(chan got, 1)
		start := time.Now()
		go func() {
			nd, err := f.dag.Get(context.Background(), blk.cid)
			done <- got{nd, err, time.Since(start)}
		}()
		synctest.Wait() // the walk is waiting
		if n := f.waiters(); n != 1 {
			t.Fatalf("%d waiters while the walk waits, want 1", n)
		}
		time.Sleep(300 * time.Millisecond) // fake time: the broadcast comes 300 ms later
		f.bcast.storeBlocks(context.Background(), []inlineBlock{blk})
		r := <-done
		if r.err != nil {
			t.Fatalf("Get: %v", r.err)
		}
		if r.nd.Cid() != blk.cid {
			t.Fatalf("Get gave %s, want %s", r.nd.Cid(), blk.cid)
		}
		if r.at != 300*time.Millisecond {
			t.Errorf("Get returned after %s, want when the broadcast came (300ms)", r.at)
		}
		f.check(t, 1, 0)
	})
}

// TestAwaitDAGFallsBackToNetwork: a block no broadcast brings is asked
// of the network after the wait, and nothing is left registered.
func TestAwaitDAGFallsBackToNetwork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAwaitFixture(time.Second)
		blk := testBlock("a lost delta")
		start := time.Now()
		_, err := f.dag.Get(context.Background(), blk.cid)
		if !ipld.IsNotFound(err) {
			t.Fatalf("Get = %v, want the inner service's not found", err)
		}
		if el := time.Since(start); el != time.Second {
			t.Errorf("the network was asked after %s, want the wait (1s)", el)
		}
		f.check(t, 0, 1)
	})
}

// TestAwaitDAGLocalAndDisabled: a local block is read at once, and with
// no wait configured a missing block goes to the network at once.
func TestAwaitDAGLocalAndDisabled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAwaitFixture(time.Second)
		blk := testBlock("a local delta")
		f.bcast.storeBlocks(context.Background(), []inlineBlock{blk})
		start := time.Now()
		if _, err := f.dag.Get(context.Background(), blk.cid); err != nil {
			t.Fatalf("Get: %v", err)
		}
		if el := time.Since(start); el != 0 {
			t.Errorf("a local block took %s", el)
		}
		off := newAwaitFixture(0)
		if _, err := off.dag.Get(context.Background(), testBlock("missing").cid); !ipld.IsNotFound(err) {
			t.Fatalf("Get = %v, want not found", err)
		}
		if el := time.Since(start); el != 0 {
			t.Errorf("with no wait, a missing block took %s", el)
		}
		for _, fx := range []*awaitFixture{f, off} {
			if b, n := fx.counts(); b+n != 0 {
				t.Errorf("awaited %d by broadcast and %d from the network, want none", b, n)
			}
		}
	})
}

// TestAwaitDAGGetManySharesOneWait: GetMany waits once for all its
// missing blocks: the ones broadcasts bring end their part of the wait,
// the rest go to the network when the one wait ends, and a walk that
// ends early (its context) stops waiting.
func TestAwaitDAGGetManySharesOneWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAwaitFixture(time.Second)
		a, b, c := testBlock("delta a"), testBlock("delta b"), testBlock("delta c")
		f.bcast.storeBlocks(context.Background(), []inlineBlock{a})
		start := time.Now()
		found := make(chan map[cid.Cid]error, 1)
		go func() {
			got := map[cid.Cid]error{}
			for opt := range f.dag.GetMany(context.Background(), []cid.Cid{a.cid, b.cid, c.cid}) {
				if opt.Err != nil {
					got[cid.Undef] = opt.Err
					continue
				}
				got[opt.Node.Cid()] = nil
			}
			found <- got
		}()
		synctest.Wait()
		time.Sleep(200 * time.Millisecond)
		f.bcast.storeBlocks(context.Background(), []inlineBlock{b})
		got := <-found
		if el := time.Since(start); el != time.Second {
			t.Errorf("GetMany asked the network after %s, want one wait (1s)", el)
		}
		for _, want := range []cid.Cid{a.cid, b.cid} {
			if err, ok := got[want]; !ok || err != nil {
				t.Errorf("block %s: found %v, err %v", want, ok, err)
			}
		}
		if _, ok := got[c.cid]; ok {
			t.Errorf("block c was found, but nothing had it")
		}
		f.check(t, 1, 1)

		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := f.dag.Get(ctx, testBlock("never").cid)
			errc <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-errc; err == nil || !(errors.Is(err, context.Canceled) || ipld.IsNotFound(err)) {
			t.Errorf("a cancelled walk: Get = %v", err)
		}
		if n := f.waiters(); n != 0 {
			t.Errorf("%d waiters left after a cancelled walk", n)
		}
	})
}

// TestAwaitDAGPausesWhileCatchingUp: a replica catching up walks deltas
// that no broadcast brings again. Once a wait runs out while broadcasts
// brought nothing waited for, walks stop waiting for pauseWaits waits; a
// wait that runs out while broadcasts do bring blocks pauses nothing.
func TestAwaitDAGPausesWhileCatchingUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const wait = time.Second
		f := newAwaitFixture(wait)
		ctx := context.Background()
		elapsed := func(name string) time.Duration {
			start := time.Now()
			if _, err := f.dag.Get(ctx, testBlock(name).cid); !ipld.IsNotFound(err) {
				t.Fatalf("Get %s = %v, want not found", name, err)
			}
			return time.Since(start)
		}
		if el := elapsed("old delta 1"); el != wait {
			t.Fatalf("the first missing block waited %s, want %s", el, wait)
		}
		if el := elapsed("old delta 2"); el != 0 {
			t.Fatalf("a missing block waited %s while catching up, want no wait", el)
		}
		f.check(t, 0, 1)
		time.Sleep(pauseWaits * wait)
		if el := elapsed("old delta 3"); el != wait {
			t.Fatalf("after the pause a missing block waited %s, want %s", el, wait)
		}

		// Live: a broadcast just brought a waited-for block, so a wait that
		// runs out does not pause the next.
		live := newAwaitFixture(wait)
		blk := testBlock("a late delta")
		done := make(chan error, 1)
		go func() {
			_, err := live.dag.Get(ctx, blk.cid)
			done <- err
		}()
		synctest.Wait()
		live.bcast.storeBlocks(ctx, []inlineBlock{blk})
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"lost 1", "lost 2"} {
			start := time.Now()
			if _, err := live.dag.Get(ctx, testBlock(name).cid); !ipld.IsNotFound(err) {
				t.Fatalf("Get = %v, want not found", err)
			}
			if el := time.Since(start); el != wait {
				t.Fatalf("%s waited %s with broadcasts arriving, want %s", name, el, wait)
			}
		}
		live.check(t, 1, 2)
	})
}
