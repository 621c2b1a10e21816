package p2p

import (
	"context"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/discovery"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Topic discovery (Config.TopicDiscovery) asks the DHT for a topic's
// subscribers whenever the topic has fewer peers than gossipsub's Dlo, and
// gossipsub checks that every second. A MacroJob room's channel has one to
// a few members, fewer than Dlo for its whole life, so each member searched
// the DHT for it every second: 7% of the CPU of a 20-processor mesh, for
// peers it was already connected to. spacedDiscovery lets one search per
// topic through at once and then spaces them, doubling the wait from
// discoveryMinWait up to discoveryMaxWait; a topic not searched for a
// discoveryMaxWait starts over.

const (
	discoveryMinWait = 10 * time.Second
	discoveryMaxWait = 5 * time.Minute
	// maxDiscoveryTopics bounds the topics spacedDiscovery remembers; a
	// topic it forgot is searched at once again.
	maxDiscoveryTopics = 4096
)

// spacedDiscovery is a discovery.Discovery whose FindPeers searches each
// namespace at most on the schedule above; between searches it finds no
// peers (those found before were connected then).
type spacedDiscovery struct {
	discovery.Discovery
	now func() time.Time

	mu    sync.Mutex
	topic map[string]*Backoff
}

func newSpacedDiscovery(d discovery.Discovery, now func() time.Time) *spacedDiscovery {
	return &spacedDiscovery{Discovery: d, now: now, topic: map[string]*Backoff{}}
}

// FindPeers implements discovery.Discoverer.
func (d *spacedDiscovery) FindPeers(ctx context.Context, ns string, opts ...discovery.Option) (<-chan peer.AddrInfo, error) {
	if !d.due(ns) {
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
