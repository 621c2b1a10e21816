package jobs

import (
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/p2p"
)

// The channels these messages travel on are joined here, with their
// validators, so that every node that joins one (a processor, a creator's
// node) checks the same things.

// JobsTopic is the Jobs channel every node joins.
const JobsTopic = p2p.TopicPrefix + "jobs"

// JobTopic is the Job channel of one job: rooms are announced and asked for
// there, and processors say when they completed a MicroJob (seed 004).
func JobTopic(id ID) string { return p2p.TopicPrefix + "job/" + id.String() }

// JoinJobsTopic joins the Jobs channel with its validator.
func JoinJobsTopic(h *p2p.Host) (*p2p.Topic[ChannelMsg], error) {
	return p2p.Join(h, p2p.TopicConfig[ChannelMsg]{
		Name:    JobsTopic,
		Kind:    "jobs",
		MaxSize: MaxChannelMsg,
		Encode:  EncodeChannelMsg,
		Decode:  DecodeChannelMsg,
		Check:   func(from peer.ID, m ChannelMsg) error { return CheckSender(from.String(), m) },
		Buffer:  1024,
	})
}

// JoinJobTopic joins job id's Job channel with its validator: rooms
// questions, room claims and announcements, progress and finalizing
// messages, each from its sender.
func JoinJobTopic(h *p2p.Host, id ID) (*p2p.Topic[ChannelMsg], error) {
	return p2p.Join(h, p2p.TopicConfig[ChannelMsg]{
		Name:    JobTopic(id),
		Kind:    "job",
		MaxSize: MaxChannelMsg,
		Encode:  EncodeChannelMsg,
		Decode:  DecodeChannelMsg,
		Check: func(from peer.ID, m ChannelMsg) error {
			if m.Kind != KindRooms && m.Kind != KindRoom && m.Kind != KindProgress && m.Kind != KindFinalizing {
				return ErrBadMessage
			}
			return CheckSender(from.String(), m)
		},
		Buffer: 256,
	})
}

// QueryAnswers paces a node's answers to KindQuery on the Jobs channel:
// at most one per Window (at least a millisecond), however many peers ask
// and however often. An answer is a broadcast that every asker hears, and
// an asker that missed it asks again; a flood of queries costs each node
// one answer per Window, not one per query. The zero value answers once
// per millisecond.
type QueryAnswers struct {
	Window time.Duration
	last   time.Time
}

// Due reports whether a query heard at now is answered, and if so counts
// the answer.
func (q *QueryAnswers) Due(now time.Time) bool {
	if !q.last.IsZero() && now.Sub(q.last) < max(q.Window, time.Millisecond) {
		return false
	}
	q.last = now
	return true
}
