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
	trafficDelivered = "delivered" // accepted and handed to subscribers
	trafficDuplicate = "duplicate" // a copy of a message already seen
	trafficSent      = "sent"      // a message in an RPC sent to a peer
)

// topicKind names the kind of a jobmesh topic for the traffic metric:
// the topic names of PROTOCOL.md without their variable parts.
func topicKind(topic string) string {
	rest, ok := strings.CutPrefix(topic, "/jobmesh/1/")
	if !ok {
		return "other"
	}
	switch {
	case rest == "crdt":
		return "crdt"
	case rest == "jobs":
		return "jobs"
	case strings.HasPrefix(rest, "job/"):
		if strings.Contains(rest, "/macro/") {
			return "macrojob"
		}
		return "job"
	}
	return "other"
}

// trafficTracer counts pubsub messages by topic kind and event. gossipsub
// calls it synchronously from its event loop, so it only counts.
type trafficTracer struct {
	counts *prometheus.CounterVec
}

var _ pubsub.RawTracer = trafficTracer{}

func (t trafficTracer) count(topic, event string, n int) {
	t.counts.WithLabelValues(topicKind(topic), event).Add(float64(n))
}

func (t trafficTracer) DeliverMessage(msg *pubsub.Message) {
	t.count(msg.GetTopic(), trafficDelivered, 1)
}

func (t trafficTracer) DuplicateMessage(msg *pubsub.Message) {
	t.count(msg.GetTopic(), trafficDuplicate, 1)
}

func (t trafficTracer) SendRPC(rpc *pubsub.RPC, _ peer.ID) {
	for _, m := range rpc.GetPublish() {
		t.count(m.GetTopic(), trafficSent, 1)
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
