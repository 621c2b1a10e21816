package p2p

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/discovery"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Topic discovery (Config.TopicDiscovery) asks the DHT for a topic's
// subscribers whenever the topic has fewer peers than gossipsub's Dlo, and
// gossipsub checks that every second. A MacroJob room's channel has one to
// a few members, fewer than Dlo for its whole life, so each member would
// search the DHT for it every second, for peers it is already connected
// to. spacedDiscovery lets one search per
// topic through at once and then spaces them, doubling the wait from
// discoveryMinWait up to discoveryMaxWait; a topic not searched for a
// discoveryMaxWait starts over.
//
// A topic joined with TopicConfig.Undiscovered stays off the DHT
// altogether: it is neither advertised nor searched for. Advertising a
// room took a DHT lookup and a provider record on some twenty peers, and
// its searches found peers the joiner was connected to or could reach
// directly; a room's members are known from its announcement and its
// lock, and the joiner dials them (TopicConfig.Reach).
//
// While the host is connected to every node that may share a topic with
// it (Host.PauseTopicDiscovery: in a small mesh, where every node dials
// every advertised processor), no topic reaches the DHT either: a search
// could find only peers it is connected to, and each advertisement and
// search costs a lookup answered by nodes with no part in the topic.

const (
	discoveryMinWait = 10 * time.Second
	discoveryMaxWait = 5 * time.Minute
	// maxDiscoveryTopics bounds the topics spacedDiscovery remembers; a
	// topic it forgot is searched at once again.
	maxDiscoveryTopics = 4096
	// hiddenAdvertiseWait is when gossipsub asks again to advertise a
	// topic kept off the DHT (it asks until the topic is left).
	hiddenAdvertiseWait = time.Hour
	// pausedAdvertiseWait is when gossipsub asks again to advertise a
	// topic while discovery is paused, so that a topic joined in a small
	// mesh is advertised within about a minute of the mesh outgrowing
	// it (gossipsub asks again after three quarters of the wait).
	pausedAdvertiseWait = time.Minute
	// pubsubNamespace is the prefix gossipsub puts before a topic's name
	// to make its discovery namespace.
	pubsubNamespace = "floodsub:"
)

// spacedDiscovery is a discovery.Discovery whose FindPeers searches each
// namespace at most on the schedule above; between searches it finds no
// peers (those found before were connected then).
type spacedDiscovery struct {
	discovery.Discovery
	now func() time.Time
	// paused keeps every topic off the DHT (Host.PauseTopicDiscovery).
	paused atomic.Bool

	mu     sync.Mutex
	topic  map[string]*Backoff
	hidden map[string]bool // namespaces kept off the DHT
}

func newSpacedDiscovery(d discovery.Discovery, now func() time.Time) *spacedDiscovery {
	return &spacedDiscovery{Discovery: d, now: now, topic: map[string]*Backoff{}, hidden: map[string]bool{}}
}

// hide keeps topic off the DHT until the returned func is called.
func (d *spacedDiscovery) hide(topic string) (show func()) {
	ns := pubsubNamespace + topic
	d.mu.Lock()
	d.hidden[ns] = true
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		delete(d.hidden, ns)
		d.mu.Unlock()
	}
}

func (d *spacedDiscovery) isHidden(ns string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.hidden[ns]
}

// Advertise implements discovery.Advertiser.
func (d *spacedDiscovery) Advertise(ctx context.Context, ns string, opts ...discovery.Option) (time.Duration, error) {
	if d.isHidden(ns) {
		return hiddenAdvertiseWait, nil
	}
	if d.paused.Load() {
		return pausedAdvertiseWait, nil
	}
	return d.Discovery.Advertise(ctx, ns, opts...)
}

// FindPeers implements discovery.Discoverer.
func (d *spacedDiscovery) FindPeers(ctx context.Context, ns string, opts ...discovery.Option) (<-chan peer.AddrInfo, error) {
	if d.isHidden(ns) || d.paused.Load() || !d.due(ns) {
		ch := make(chan peer.AddrInfo)
		close(ch)
		return ch, nil
	}
	return d.Discovery.FindPeers(ctx, ns, opts...)
}

// due reports whether ns may be searched now, and if so schedules its
// next search.
func (d *spacedDiscovery) due(ns string) bool {
	now := d.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	b, ok := d.topic[ns]
	if ok && !b.Ready(now) {
		return false
	}
	if ok && now.Sub(b.next) >= discoveryMaxWait {
		b.Reset() // not searched for long: start over
	}
	if !ok {
		if len(d.topic) >= maxDiscoveryTopics {
			for k, o := range d.topic {
				if now.Sub(o.next) >= discoveryMaxWait {
					delete(d.topic, k)
				}
			}
			if len(d.topic) >= maxDiscoveryTopics {
				clear(d.topic)
			}
		}
		b = NewBackoff(discoveryMinWait, discoveryMaxWait)
		d.topic[ns] = b
	}
	b.Failed(now) // schedules the next search
	return true
}
