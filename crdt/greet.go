package crdt

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/ipfs/go-cid"
	crdtpb "github.com/ipfs/go-ds-crdt/pb"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"google.golang.org/protobuf/proto"
)

// greetDelay gathers the peers that join the topic together (as a new
// replica connects to the mesh) into one greeting; greetSpread is the
// most a replica's greeting waits past it (drawn at random, greetJitter),
// so that the young replicas of one topic do not all greet at once, and
// those that come later hear a greeting that covers their heads and stay
// silent.
const (
	greetDelay  = 100 * time.Millisecond
	greetSpread = 400 * time.Millisecond
)

func greetJitter() time.Duration { return rand.N(greetSpread) }

// greet greets the peers that join the topic during this replica's first
// repeat interval (RebroadcastInterval): it announces to them the heads it
// made then that are still heads, unless they heard them since they joined.
//
// A node writes its first records (its advertisement, or a job store's
// first locks) as it opens the store, before gossipsub has a mesh for the
// topic: those announcements reach few peers or none, and the rest would
// learn of the records only from gossip, if at all, or at the next
// periodic re-announcement. Processors that rank one another from the
// advertisements would meanwhile disagree. Each head is greeted by its
// maker alone, and not once a delta above it or a greeting of it has been
// announced since the joins, so the young replicas of a store opened
// together greet a batch of joins about once per head, not once each: in
// a job store of 100 processors every replica that had written greeted
// with its latest announcement, 46 greetings in one job, a tenth of each
// node's store messages. A replica that has been on the topic longer
// leaves it to the periodic re-announcement: a mesh that grows by one node
// does not make every replica speak.
func (b *broadcaster) greet(ctx context.Context) {
	for {
		ev, err := b.events.NextPeerEvent(ctx)
		if err != nil {
			return
		}
		if !b.young() {
			return // the periodic re-announcement catches newcomers up now
		}
		if ev.Type != pubsub.PeerJoin {
			continue
		}
		b.mu.Lock()
		b.joined = b.now()
		if b.greeting == nil {
			b.greeting = time.AfterFunc(greetDelay+b.spread(), b.reannounce)
		}
		b.mu.Unlock()
	}
}

// reannounce publishes the greeting (takeGreeting) with its head blocks. The
// timer starts even before this replica holds a head: go-ds-crdt
// announces a write after Put returns, and one made as the peer joined
// may have missed it.
func (b *broadcaster) reannounce() {
	if b.ctx.Err() != nil {
		return
	}
	announce := b.takeGreeting()
	if announce == nil {
		return
	}
	if err := b.publish(b.ctx, announce); err != nil {
		b.log.Debug("greeting peers that joined", "err", err)
	}
}

// takeGreeting ends the pending greeting and returns its announcement:
// the heads this replica made while young (made) that are still among its
// current heads (all of them before the store is open), less those
// announced on the topic, by any replica, greetDelay or more after the
// last of the peers it greets joined, or named as a parent by a delta
// announced since: those reached them as a greeting would have. (One
// announced sooner may not have: a peer that has just joined a topic is
// not yet in its gossipsub mesh.) Nil if none is left. The heads it keeps
// count as announced now (suppress).
func (b *broadcaster) takeGreeting() []byte {
	b.mu.Lock()
	b.greeting = nil
	current := b.heads
	b.mu.Unlock()
	var heads []cid.Cid
	if current != nil {
		heads = current() // outside mu: go-ds-crdt's lock of its heads comes first
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if current == nil {
		for h := range b.mine {
			heads = append(heads, h)
		}
	}
	var kept []*crdtpb.Head
	heard, made := b.joined.Add(greetDelay), 0
	for _, h := range heads {
		if _, ok := b.mine[h]; !ok {
			continue // its maker greets, if young
		}
		made++
		if at, ok := b.announced[h]; ok && !at.Before(heard) {
			continue
		}
		if at, ok := b.covered[h]; ok && !at.Before(heard) {
			continue // a delta above it was: they walk down to it
		}
		b.announced[h] = now
		kept = append(kept, &crdtpb.Head{Cid: h.Bytes()})
	}
	if b.count != nil {
		b.count(len(kept), made-len(kept))
	}
	if len(kept) == 0 {
		return nil
	}
	out, err := proto.Marshal(&crdtpb.CRDTBroadcast{Heads: kept})
	if err != nil {
		return nil
	}
	return out
}

// made marks the heads of go-ds-crdt's announcement that nobody has
// announced on the topic yet as this replica's own: its new writes.
func (b *broadcaster) made(announce []byte) {
	heads := announcedHeads(announce)
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	trim(b.mine, now, b.repeat)
	for _, h := range heads {
		if _, ok := b.announced[h]; !ok {
			b.mine[h] = now
		}
	}
}

// announcedHeads returns the heads an announcement of go-ds-crdt's names.
func announcedHeads(announce []byte) []cid.Cid {
	var msg crdtpb.CRDTBroadcast
	if proto.Unmarshal(announce, &msg) != nil {
		return nil
	}
	out := make([]cid.Cid, 0, len(msg.Heads))
	for _, h := range msg.Heads {
		if c, err := cid.Cast(h.GetCid()); err == nil {
			out = append(out, c)
		}
	}
	return out
}

// setHeads tells the broadcaster where to read the replica's current
// heads, once the store is open.
func (b *broadcaster) setHeads(h func() []cid.Cid) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.heads = h
}

// young reports whether this replica is within its first repeat interval
// on the topic, when it greets joining peers (greet).
func (b *broadcaster) young() bool {
	return b.repeat > 0 && b.now().Sub(b.started) < b.repeat
}
