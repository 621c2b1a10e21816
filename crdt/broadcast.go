package crdt

import (
	"context"
	"fmt"
	"sync"

	"github.com/ipfs/go-cid"
	dscrdt "github.com/ipfs/go-ds-crdt"
	crdtpb "github.com/ipfs/go-ds-crdt/pb"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"google.golang.org/protobuf/proto"
)

// maxBroadcastBytes bounds one head announcement on the wire; a CID is well
// under 100 bytes, so this leaves room for MaxBroadcastHeads of them.
const maxBroadcastBytes = 64 << 10

var _ dscrdt.Broadcaster = (*broadcaster)(nil)

// broadcaster is go-ds-crdt's Broadcaster over one gossipsub topic. Unlike
// go-ds-crdt's PubSubBroadcaster it leaves the topic synchronously on Close,
// so a Store can be reopened on the same PubSub at once.
type broadcaster struct {
	ps    *pubsub.PubSub
	name  string
	topic *pubsub.Topic
	sub   *pubsub.Subscription

	closeOnce sync.Once
}

// newBroadcaster registers the announcement validator, joins the topic and
// subscribes to it.
func newBroadcaster(ps *pubsub.PubSub, name string, maxHeads int) (*broadcaster, error) {
	validate := func(_ context.Context, _ peer.ID, msg *pubsub.Message) bool {
		return validateBroadcast(msg.GetData(), maxHeads) == nil
	}
	if err := ps.RegisterTopicValidator(name, validate); err != nil {
		return nil, fmt.Errorf("crdt: registering validator on %q: %w", name, err)
	}
	topic, err := ps.Join(name)
	if err != nil {
		_ = ps.UnregisterTopicValidator(name)
		return nil, fmt.Errorf("crdt: joining %q: %w", name, err)
	}
	sub, err := topic.Subscribe()
	if err != nil {
		_ = topic.Close()
		_ = ps.UnregisterTopicValidator(name)
		return nil, fmt.Errorf("crdt: subscribing to %q: %w", name, err)
	}
	return &broadcaster{ps: ps, name: name, topic: topic, sub: sub}, nil
}

// validateBroadcast accepts only a go-ds-crdt head announcement with 1 to
// maxHeads well-formed CIDs, so garbage is dropped before it reaches the
// CRDT or is forwarded to other peers.
func validateBroadcast(data []byte, maxHeads int) error {
	if len(data) > maxBroadcastBytes {
		return fmt.Errorf("announcement of %d bytes", len(data))
	}
	var msg crdtpb.CRDTBroadcast
	if err := proto.Unmarshal(data, &msg); err != nil {
		return err
	}
	if len(msg.ProtoReflect().GetUnknown()) > 0 {
		return fmt.Errorf("unknown fields")
	}
	if len(msg.Heads) == 0 || len(msg.Heads) > maxHeads {
		return fmt.Errorf("%d heads", len(msg.Heads))
	}
	for _, h := range msg.Heads {
		if _, err := cid.Cast(h.GetCid()); err != nil {
			return err
		}
	}
	return nil
}

func (b *broadcaster) Broadcast(ctx context.Context, data []byte) error {
	return b.topic.Publish(ctx, data)
}

func (b *broadcaster) Next(ctx context.Context) ([]byte, error) {
	msg, err := b.sub.Next(ctx)
	if err != nil {
		// Next fails only when the subscription or ctx is done; both are
		// final, and go-ds-crdt stops on ErrNoMoreBroadcast.
		return nil, dscrdt.ErrNoMoreBroadcast
	}
	return msg.GetData(), nil
}

// Close leaves the topic and removes the validator. The PubSub stays open.
func (b *broadcaster) Close() error {
	var err error
	b.closeOnce.Do(func() {
		b.sub.Cancel() // returns once the pubsub loop has dropped the subscription
		err = b.topic.Close()
		if uerr := b.ps.UnregisterTopicValidator(b.name); uerr != nil && err == nil {
			err = uerr
		}
	})
	return err
}
