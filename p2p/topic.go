package p2p

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
)

// ErrClosed is returned by a Topic after Close.
var ErrClosed = errors.New("p2p: topic closed")

// TopicConfig describes one gossipsub topic and how its messages are
// checked. Every message passes the validator before any subscriber sees it:
// an oversized, undecodable or wrongly authored message is rejected (and
// gossipsub penalises the peer that forwarded it).
type TopicConfig[T any] struct {
	// Name is the full topic name; it must start with TopicPrefix.
	Name string
	// Kind labels the topic in metrics ("jobs", "job", "macrojob", ...);
	// keep its set small.
	Kind string
	// MaxSize is the largest message accepted, in bytes. Required.
	MaxSize int
	// Encode and Decode convert messages; Decode must reject anything it
	// cannot fully parse.
	Encode func(T) ([]byte, error)
	Decode func([]byte) (T, error)
	// Check, when set, verifies a decoded message's claims against its
	// author, the peer whose key signed it (StrictSign).
	Check func(from peer.ID, msg T) error
	// Buffer is the subscription's queue length. Default: 256.
	Buffer int
	// Undiscovered keeps the topic off the DHT: it is neither advertised
	// nor searched for there (see discovery.go). Its subscribers are the
	// peers in Reach, those connected already, and those who reach this
	// host. For short-lived topics whose members are known otherwise,
	// such as a MacroJob room.
	Undiscovered bool
	// Reach lists peers Join connects to in the background
	// (Host.Reach), such as members a room's announcement and lock name.
	Reach []peer.ID
}

// reachTimeout bounds Join's background dial of one TopicConfig.Reach peer.
const reachTimeout = 30 * time.Second

// Message is a validated message on a Topic.
type Message[T any] struct {
	From  peer.ID
	Value T
	// Local is true for messages this host published.
	Local bool
}

// Topic is a joined gossipsub topic carrying messages of type T.
type Topic[T any] struct {
	cfg   TopicConfig[T]
	h     *Host
	topic *pubsub.Topic
	sub   *pubsub.Subscription

	show   func() // ends Undiscovered's hiding
	cancel context.CancelFunc
	wg     sync.WaitGroup
	events *pubsub.TopicEventHandler

	peersMu sync.Mutex
	peers   map[peer.ID]bool // subscribed peers, from the topic's events
}

// Join registers the topic's validator, joins it and subscribes.
func Join[T any](h *Host, cfg TopicConfig[T]) (*Topic[T], error) {
	if !strings.HasPrefix(cfg.Name, TopicPrefix) {
		return nil, fmt.Errorf("%w: topic %q is outside %s", ErrInvalidConfig, cfg.Name, TopicPrefix)
	}
	if cfg.MaxSize <= 0 || cfg.Encode == nil || cfg.Decode == nil {
		return nil, fmt.Errorf("%w: topic %q needs MaxSize, Encode and Decode", ErrInvalidConfig, cfg.Name)
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = 256
	}
	t := &Topic[T]{cfg: cfg, h: h, show: func() {}}
	if err := h.PubSub.RegisterTopicValidator(cfg.Name, t.validate); err != nil {
		return nil, fmt.Errorf("p2p: validator for %s: %w", cfg.Name, err)
	}
	if cfg.Undiscovered && h.disc != nil {
		t.show = h.disc.hide(cfg.Name) // before Subscribe, which advertises
	}
	topic, err := h.PubSub.Join(cfg.Name)
	if err != nil {
		t.show()
		_ = h.PubSub.UnregisterTopicValidator(cfg.Name)
		return nil, fmt.Errorf("p2p: join %s: %w", cfg.Name, err)
	}
	sub, err := topic.Subscribe(pubsub.WithBufferSize(cfg.Buffer))
	if err != nil {
		topic.Close()
		t.show()
		_ = h.PubSub.UnregisterTopicValidator(cfg.Name)
		return nil, fmt.Errorf("p2p: subscribe %s: %w", cfg.Name, err)
	}
	events, err := topic.EventHandler()
	if err != nil {
		sub.Cancel()
		topic.Close()
		t.show()
		_ = h.PubSub.UnregisterTopicValidator(cfg.Name)
		return nil, fmt.Errorf("p2p: peer events of %s: %w", cfg.Name, err)
	}
	t.topic, t.sub, t.events, t.peers = topic, sub, events, map[peer.ID]bool{}
	ctx, cancel := context.WithCancel(h.runCtx)
	t.cancel = cancel
	t.wg.Go(func() { t.trackPeers(ctx) })
	for _, id := range cfg.Reach {
		t.wg.Go(func() { t.reach(ctx, id) })
	}
	return t, nil
}

// trackPeers keeps the set of the topic's subscribed peers.
func (t *Topic[T]) trackPeers(ctx context.Context) {
	for {
		ev, err := t.events.NextPeerEvent(ctx)
		if err != nil {
			return
		}
		t.peersMu.Lock()
		if ev.Type == pubsub.PeerJoin {
			t.peers[ev.Peer] = true
		} else {
			delete(t.peers, ev.Peer)
		}
		t.peersMu.Unlock()
	}
}

// HasPeers reports whether some other peer is known to be subscribed to
// the topic. A message published while none is reaches nobody.
func (t *Topic[T]) HasPeers() bool {
	t.peersMu.Lock()
	defer t.peersMu.Unlock()
	return len(t.peers) > 0
}

// reach connects to id, one of the topic's known members.
func (t *Topic[T]) reach(ctx context.Context, id peer.ID) {
	ctx, cancel := context.WithTimeout(ctx, reachTimeout)
	defer cancel()
	if err := t.h.Reach(ctx, id); err != nil && ctx.Err() == nil {
		t.h.log.Debug("reach topic member", "topic", t.cfg.Name, "peer", id, "err", err)
	}
}

func (t *Topic[T]) validate(_ context.Context, from peer.ID, m *pubsub.Message) pubsub.ValidationResult {
	reject := func(reason string, err error) pubsub.ValidationResult {
		t.h.metrics.rejected.WithLabelValues(t.cfg.Kind, reason).Inc()
		t.h.log.Debug("message rejected", "topic", t.cfg.Name, "from", m.GetFrom(), "via", from, "reason", reason, "err", err)
		return pubsub.ValidationReject
	}
	if len(m.Data) > t.cfg.MaxSize {
		return reject("oversized", nil)
	}
	author := m.GetFrom()
	if author == "" {
		return reject("unsigned", nil)
	}
	v, err := t.cfg.Decode(m.Data)
	if err != nil {
		return reject("malformed", err)
	}
	if t.cfg.Check != nil {
		if err := t.cfg.Check(author, v); err != nil {
			return reject("author", err)
		}
	}
	m.ValidatorData = v
	t.h.metrics.received.WithLabelValues(t.cfg.Kind).Inc()
	return pubsub.ValidationAccept
}

// Publish encodes and publishes msg.
func (t *Topic[T]) Publish(ctx context.Context, msg T) error {
	b, err := t.cfg.Encode(msg)
	if err != nil {
		return fmt.Errorf("p2p: encode for %s: %w", t.cfg.Name, err)
	}
	if len(b) > t.cfg.MaxSize {
		return fmt.Errorf("p2p: message for %s is %d bytes, limit %d", t.cfg.Name, len(b), t.cfg.MaxSize)
	}
	if err := t.topic.Publish(ctx, b); err != nil {
		return fmt.Errorf("p2p: publish to %s: %w", t.cfg.Name, err)
	}
	return nil
}

// Next blocks for the next validated message.
func (t *Topic[T]) Next(ctx context.Context) (Message[T], error) {
	m, err := t.sub.Next(ctx)
	if err != nil {
		if errors.Is(err, pubsub.ErrSubscriptionCancelled) {
			return Message[T]{}, ErrClosed
		}
		return Message[T]{}, err
	}
	v, _ := m.ValidatorData.(T)
	return Message[T]{From: m.GetFrom(), Value: v, Local: m.ReceivedFrom == t.h.ID()}, nil
}

// Peers lists the peers known to be subscribed to the topic.
func (t *Topic[T]) Peers() []peer.ID { return t.topic.ListPeers() }

// Close leaves the topic.
func (t *Topic[T]) Close() error {
	t.cancel()
	t.wg.Wait()
	t.events.Cancel()
	t.sub.Cancel()
	err := t.topic.Close()
	t.show()
	_ = t.h.PubSub.UnregisterTopicValidator(t.cfg.Name)
	return err
}
