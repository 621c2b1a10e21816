package p2p

import (
	"context"
	"testing"
	"time"

	dhtpb "github.com/libp2p/go-libp2p-kad-dht/pb"
	"github.com/libp2p/go-libp2p/core/discovery"
	"github.com/libp2p/go-libp2p/core/peer"
)

// countingDiscovery finds no peers and counts the searches and
// advertisements by namespace.
type countingDiscovery struct{ found, advertised map[string]int }

func (c *countingDiscovery) Advertise(_ context.Context, ns string, _ ...discovery.Option) (time.Duration, error) {
	c.advertised[ns]++
	return time.Minute, nil
}

func (c *countingDiscovery) FindPeers(_ context.Context, ns string, _ ...discovery.Option) (<-chan peer.AddrInfo, error) {
	c.found[ns]++
	ch := make(chan peer.AddrInfo)
	close(ch)
	return ch, nil
}

// TestSpacedDiscovery: a topic is searched at once, then again only after
// 10 s, 20 s, 40 s, ... up to 5 min; other topics are not held back by it;
// a topic not searched for 5 min past its schedule starts over.
func TestSpacedDiscovery(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	inner := &countingDiscovery{found: map[string]int{}, advertised: map[string]int{}}
	d := newSpacedDiscovery(inner, func() time.Time { return now })
	find := func(ns string) {
		ch, err := d.FindPeers(context.Background(), ns)
		if err != nil {
			t.Fatal(err)
		}
		for range ch {
		}
	}
	// Gossipsub asks every second while the room has few peers.
	for range 75 {
		find("room")
		now = now.Add(time.Second)
	}
	// Searches at 0, 10, 30 and 70 s.
	if got := inner.found["room"]; got != 4 {
		t.Fatalf("%d searches in 75 s, want 4", got)
	}
	find("jobs")
	if inner.found["jobs"] != 1 {
		t.Fatal("another topic's first search is held back")
	}
	now = now.Add(discoveryMaxWait + 2*time.Minute)
	find("room")
	find("room")
	now = now.Add(discoveryMinWait)
	find("room")
	if got := inner.found["room"]; got != 6 {
		t.Fatalf("%d searches, want 6: after a long pause the wait starts over at %s", got, discoveryMinWait)
	}
}

// TestHiddenTopicIsNeitherAdvertisedNorSearched: while a topic is hidden
// (TopicConfig.Undiscovered), nothing about it reaches the DHT; once it
// is shown again it is advertised and searched as any other.
func TestHiddenTopicIsNeitherAdvertisedNorSearched(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	inner := &countingDiscovery{found: map[string]int{}, advertised: map[string]int{}}
	d := newSpacedDiscovery(inner, func() time.Time { return now })
	ctx := context.Background()
	room, jobs := pubsubNamespace+TopicPrefix+"job/j/macro/0", pubsubNamespace+TopicPrefix+"jobs"
	show := d.hide(TopicPrefix + "job/j/macro/0")
	for range 3 {
		for _, ns := range []string{room, jobs} {
			ttl, err := d.Advertise(ctx, ns)
			if err != nil || ttl <= 0 {
				t.Fatalf("advertise %s: ttl %s, err %v", ns, ttl, err)
			}
			ch, err := d.FindPeers(ctx, ns)
			if err != nil {
				t.Fatal(err)
			}
			for range ch {
			}
		}
		now = now.Add(time.Hour)
	}
	if inner.advertised[room] != 0 || inner.found[room] != 0 {
		t.Fatalf("hidden topic: %d advertisements, %d searches reached the DHT", inner.advertised[room], inner.found[room])
	}
	if inner.advertised[jobs] != 3 || inner.found[jobs] != 3 {
		t.Fatalf("other topic: %d advertisements, %d searches, want 3 and 3", inner.advertised[jobs], inner.found[jobs])
	}
	show()
	if _, err := d.Advertise(ctx, room); err != nil {
		t.Fatal(err)
	}
	if inner.advertised[room] != 1 {
		t.Fatal("a topic shown again is not advertised")
	}
}

// TestPausedDiscoveryReachesNoDHT: while discovery is paused no topic is
// advertised or searched, and gossipsub is asked to come back within
// about a minute; once resumed, a topic is advertised and searched at
// once.
func TestPausedDiscoveryReachesNoDHT(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	inner := &countingDiscovery{found: map[string]int{}, advertised: map[string]int{}}
	d := newSpacedDiscovery(inner, func() time.Time { return now })
	ctx := context.Background()
	ns := pubsubNamespace + TopicPrefix + "job/j"
	find := func() {
		ch, err := d.FindPeers(ctx, ns)
		if err != nil {
			t.Fatal(err)
		}
		for range ch {
		}
	}
	d.paused.Store(true)
	for range 120 {
		ttl, err := d.Advertise(ctx, ns)
		if err != nil || ttl != pausedAdvertiseWait {
			t.Fatalf("paused advertise: ttl %s, err %v; want %s", ttl, err, pausedAdvertiseWait)
		}
		find()
		now = now.Add(time.Second)
	}
	if inner.advertised[ns] != 0 || inner.found[ns] != 0 {
		t.Fatalf("paused: %d advertisements, %d searches reached the DHT", inner.advertised[ns], inner.found[ns])
	}
	d.paused.Store(false)
	if _, err := d.Advertise(ctx, ns); err != nil {
		t.Fatal(err)
	}
	find()
	if inner.advertised[ns] != 1 || inner.found[ns] != 1 {
		t.Fatalf("resumed: %d advertisements, %d searches, want 1 and 1", inner.advertised[ns], inner.found[ns])
	}
}

// TestDHTRequestTypeIsBounded: the request counter's label is one of the
// known message types, or "other" whatever number a peer sends.
func TestDHTRequestTypeIsBounded(t *testing.T) {
	for typ, want := range map[dhtpb.Message_MessageType]string{
		dhtpb.Message_FIND_NODE:       "find_node",
		dhtpb.Message_GET_PROVIDERS:   "get_providers",
		dhtpb.Message_ADD_PROVIDER:    "add_provider",
		dhtpb.Message_PING:            "ping",
		dhtpb.Message_MessageType(42): "other",
		dhtpb.Message_MessageType(-1): "other",
	} {
		if got := dhtRequestType(typ); got != want {
			t.Errorf("dhtRequestType(%d) = %q, want %q", typ, got, want)
		}
	}
}
