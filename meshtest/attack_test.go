package meshtest

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	dscrdt "github.com/ipfs/go-ds-crdt"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/ipfs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshclient"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/records"
)

// counterSum sums a counter family in reg.
func counterSum(t *testing.T, reg prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// attacker is a peer that speaks the store's wire protocol without its
// checks: it runs go-ds-crdt directly on the mesh's topic and namespace.
type attacker struct {
	host *p2p.Host
	raw  *dscrdt.Datastore
}

func newAttacker(t *testing.T, m *localmesh.Mesh) *attacker {
	t.Helper()
	ctx := context.Background()
	key, err := p2p.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	cfg := p2p.LoopbackConfig()
	cfg.Bootstrap = m.BootstrapAddrs()
	h, err := p2p.New(ctx, p2p.Params{Config: cfg, Identity: key, Logger: Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	dstore := dssync.MutexWrap(ds.NewMapDatastore())
	blocks, err := ipfs.New(ctx, ipfs.Params{Config: ipfs.DefaultConfig(), Host: h, Routing: h.DHT, Datastore: dstore, Logger: Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { blocks.Close() })
	bc, err := crdt.NewBroadcaster(h.PubSub, crdt.DefaultConfig().Topic, blocks.DAGService(), Logger())
	if err != nil {
		t.Fatal(err)
	}
	opts := dscrdt.DefaultOptions()
	opts.RebroadcastInterval = 500 * time.Millisecond
	raw, err := dscrdt.New(dstore, ds.NewKey(crdt.DefaultConfig().Namespace), blocks.DAGService(), bc, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return &attacker{host: h, raw: raw}
}

func TestForgedRecordsAndOversizedMessagesAreRejected(t *testing.T) {
	m := New(t, localmesh.Options{Processors: 3})
	ctx := context.Background()
	victim := m.Members[1]
	victimKey := records.AdvertKey(victim.Host.ID().String())
	wait.Until(t, 30*time.Second, func() error {
		for _, mem := range m.Members {
			if ads, err := mem.Processors(ctx); err != nil || len(ads) != 3 {
				return fmt.Errorf("member %d: %d processors (%v)", mem.Index, len(ads), err)
			}
		}
		return nil
	})

	a := newAttacker(t, m)
	// The attacker's replica syncs the victim's signed advertisement...
	var original []byte
	wait.Until(t, 30*time.Second, func() error {
		var err error
		original, err = a.raw.Get(ctx, ds.NewKey(victimKey))
		return err
	})
	// ...and writes it back with one payload byte changed: a forged record
	// under a key only the victim may write.
	forged := append([]byte(nil), original...)
	forged[len(forged)-80] ^= 0x01
	if err := a.raw.Put(ctx, ds.NewKey(victimKey), forged); err != nil {
		t.Fatal(err)
	}
	// And plain garbage under another key.
	if err := a.raw.Put(ctx, ds.NewKey("/test/garbage"), []byte("not an envelope")); err != nil {
		t.Fatal(err)
	}
	for _, mem := range m.Members {
		if err := a.host.Connect(ctx, peer.AddrInfo{ID: mem.Host.ID(), Addrs: mem.Host.Addrs()}); err != nil {
			t.Fatal(err)
		}
	}

	// Every honest node rejects both records on read, counts them, and
	// keeps serving everything else.
	wait.Until(t, 30*time.Second, func() error {
		for _, mem := range m.Members {
			if _, err := mem.Store.Get(ctx, victimKey); !errors.Is(err, crdt.ErrRejected) {
				return fmt.Errorf("member %d reads the forged advert: %v", mem.Index, err)
			}
			if _, err := mem.Store.Get(ctx, "/test/garbage"); !errors.Is(err, crdt.ErrRejected) {
				return fmt.Errorf("member %d reads the garbage: %v", mem.Index, err)
			}
			if n := counterSum(t, mem.Metrics, "jobmesh_crdt_records_rejected_total"); n < 2 {
				return fmt.Errorf("member %d counted %v rejections", mem.Index, n)
			}
		}
		return nil
	})
	for _, mem := range m.Members {
		ads, err := mem.Processors(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ad := range ads {
			if ad.PeerID == victim.Host.ID().String() {
				t.Fatalf("member %d lists the forged advertisement", mem.Index)
			}
		}
	}
	// The victim's next advertisement supersedes the forgery everywhere.
	if err := victim.Advertise(ctx); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 30*time.Second, func() error {
		for _, mem := range m.Members {
			if ads, err := mem.Processors(ctx); err != nil || len(ads) != 3 {
				return fmt.Errorf("member %d: %d processors (%v)", mem.Index, len(ads), err)
			}
		}
		return nil
	})
	// The API keeps answering.
	srv := httptest.NewServer(api.NewHandler(m.Members[2].Node.APIDeps(), m.Members[2].Node.Config.API))
	defer srv.Close()
	if _, err := meshclient.New(srv.URL).Nodes(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestOversizedAndMalformedAnnouncementsAreDropped(t *testing.T) {
	m := New(t, localmesh.Options{Processors: 2})
	ctx := context.Background()
	a := newAttacker(t, m)
	for _, mem := range m.Members {
		if err := a.host.Connect(ctx, peer.AddrInfo{ID: mem.Host.ID(), Addrs: mem.Host.Addrs()}); err != nil {
			t.Fatal(err)
		}
	}
	// The attacker's go-ds-crdt already joined the topic; publish through
	// the same router.
	topicName := crdt.DefaultConfig().Topic
	// The attacker drops its own announcement validator, so it can send
	// what the store's peers must refuse.
	if err := a.host.PubSub.UnregisterTopicValidator(topicName); err != nil {
		t.Fatal(err)
	}
	junk := [][]byte{
		make([]byte, 900<<10), // under the transport limit, over the announcement limit
		[]byte("\xff\xfe not a protobuf"),
	}
	for _, j := range junk {
		//lint:ignore SA1019 the attacker's store has joined the topic, so Join would refuse it
		if err := a.host.PubSub.Publish(topicName, j); err != nil {
			t.Fatal(err)
		}
	}
	// Past the transport limit (1 MiB) the message never leaves: gossipsub
	// drops an RPC that large on both sides.
	_ = a.host.PubSub.Publish(topicName, make([]byte, 2<<20)) //lint:ignore SA1019 as above
	// The mesh keeps replicating.
	want := map[string][]byte{"/test/after-attack": []byte("still replicating")}
	if err := m.Members[1].Store.Put(ctx, "/test/after-attack", "test", want["/test/after-attack"]); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 30*time.Second, func() error { return readAll(ctx, m, want) })
}
