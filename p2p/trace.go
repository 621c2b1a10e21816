package p2p

import (
	"strings"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/prometheus/client_golang/prometheus"
)

// Pubsub traffic, by topic kind, is what the coordination of a job costs
// each node: every message is read, checked and handled by every member
// of its topic, and gossipsub's duplicates are read and dropped.
const (
	trafficDelivered = iota // accepted and handed to subscribers
	trafficDuplicate        // a copy of a message already seen
	trafficSent             // a message in an RPC sent to a peer
	trafficEvents
)

// trafficEventNames are the event label values, by event.
var trafficEventNames = [trafficEvents]string{"delivered", "duplicate", "sent"}

// Topic kinds of the traffic metric: the topic names of PROTOCOL.md
// without their variable parts.
const (
	kindCRDT = iota
	kindJobCRDT
	kindJobs
	kindJob
	kindMacroJob
	kindRoomCRDT
	kindOther
	topicKinds
)

// topicKindNames are the topic label values, by kind.
var topicKindNames = [topicKinds]string{"crdt", "jobcrdt", "jobs", "job", "macrojob", "roomcrdt", "other"}

// topicKind is the kind of a jobmesh topic for the traffic metric.
func topicKind(topic string) int {
	rest, ok := strings.CutPrefix(topic, TopicPrefix)
	switch {
	case !ok:
		return kindOther
	case rest == "crdt":
		return kindCRDT
	case rest == "jobs":
		return kindJobs
	case strings.HasPrefix(rest, "job/"):
		if strings.Contains(rest, "/macro/") {
			if strings.HasSuffix(rest, "/crdt") {
				return kindRoomCRDT
			}
			return kindMacroJob
		}
		if strings.HasSuffix(rest, "/crdt") {
			return kindJobCRDT
		}
		return kindJob
	}
	return kindOther
}

// trafficTracer counts pubsub messages by topic kind and event. gossipsub
// calls it synchronously from its event loop, so it only counts, on
// counters resolved once rather than by label for every message.
type trafficTracer struct {
	counts *[topicKinds][trafficEvents]prometheus.Counter
}

func newTrafficTracer(vec *prometheus.CounterVec) trafficTracer {
	var c [topicKinds][trafficEvents]prometheus.Counter
	for k := range c {
		for e := range c[k] {
			c[k][e] = vec.WithLabelValues(topicKindNames[k], trafficEventNames[e])
		}
	}
	return trafficTracer{&c}
}

var _ pubsub.RawTracer = trafficTracer{}

func (t trafficTracer) count(topic string, event int) {
	t.counts[topicKind(topic)][event].Inc()
}

func (t trafficTracer) DeliverMessage(msg *pubsub.Message) {
	t.count(msg.GetTopic(), trafficDelivered)
}

func (t trafficTracer) DuplicateMessage(msg *pubsub.Message) {
	t.count(msg.GetTopic(), trafficDuplicate)
}

func (t trafficTracer) SendRPC(rpc *pubsub.RPC, _ peer.ID) {
	for _, m := range rpc.GetPublish() {
		t.count(m.GetTopic(), trafficSent)
	}
}

func (trafficTracer) AddPeer(peer.ID, protocol.ID)             {}
func (trafficTracer) RemovePeer(peer.ID)                       {}
func (trafficTracer) Join(string)                              {}
func (trafficTracer) Leave(string)                             {}
func (trafficTracer) Graft(peer.ID, string)                    {}
func (trafficTracer) Prune(peer.ID, string)                    {}
func (trafficTracer) ValidateMessage(*pubsub.Message)          {}
func (trafficTracer) RejectMessage(*pubsub.Message, string)    {}
func (trafficTracer) ThrottlePeer(peer.ID)                     {}
func (trafficTracer) RecvRPC(*pubsub.RPC)                      {}
func (trafficTracer) DropRPC(*pubsub.RPC, peer.ID)             {}
func (trafficTracer) UndeliverableMessage(*pubsub.Message)     {}
func (trafficTracer) OnNewOutboundStream(peer.ID, protocol.ID) {}
func (trafficTracer) OnClosedOutboundStream(peer.ID)           {}
