package crdt

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ipfs/go-cid"
	dscrdt "github.com/ipfs/go-ds-crdt"
	crdtpb "github.com/ipfs/go-ds-crdt/pb"
	ipld "github.com/ipfs/go-ipld-format"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"google.golang.org/protobuf/proto"
)

var _ dscrdt.Broadcaster = (*broadcaster)(nil)

// broadcaster is go-ds-crdt's Broadcaster over one gossipsub topic. Unlike
// go-ds-crdt's PubSubBroadcaster it leaves the topic synchronously on Close,
// so a Store can be reopened on the same PubSub at once.
//
// Each broadcast carries the head blocks it announces (up to
// maxInlineBytes), so a replica that receives it adds them to its DAG
// service before go-ds-crdt walks the heads, instead of fetching each over
// bitswap: that fetch, one head at a time, was most of the time a record
// took to reach the other replicas under a burst of writes.
type broadcaster struct {
	ps    *pubsub.PubSub
	name  string
	topic *pubsub.Topic
	sub   *pubsub.Subscription
	dag   ipld.DAGService
	// stored, if set, is told each block a broadcast brought (awaitDAG).
	stored func(cid.Cid)
	log    interface{ Debug(string, ...any) }
	// queue holds announcements whose blocks are stored, for Next; pump
	// closes it when the subscription ends.
	queue  chan []byte
	cancel context.CancelFunc
	pumped chan struct{}
	// queued is when each head was last queued for go-ds-crdt (pump's
	// goroutine only); now is the clock.
	queued map[cid.Cid]time.Time
	now    func() time.Time
	// repeat is how long after a head was announced on the topic, by any
	// replica this one included, this replica leaves it out of its own
	// announcements (suppress); announced holds when each head last was,
	// and covered when a broadcast block first named it as a parent.
	repeat    time.Duration
	mu        sync.Mutex
	announced map[cid.Cid]time.Time
	covered   map[cid.Cid]time.Time
	// count, if set, is told how many heads each Broadcast sent and
	// left out.
	count func(sent, suppressed int)

	// backfill, if set with local, asks an announcement's author for the
	// history below a delta whose parents this replica lacks, when the
	// delta is more than backfillBehind above the replica's height
	// (height: guarded by mu, set once the store is open); filling is true
	// while one runs, filled counts the runs Close waits for
	// (backfill.go).
	backfill *Backfill
	local    LocalBlocks
	height   func() uint64
	filling  atomic.Bool
	filled   sync.WaitGroup

	// A replica new on the topic greets the peers that join it
	// (greet): started is when it joined; last (guarded by mu) is its
	// latest own announcement, and greeting the pending re-announcement
	// of it.
	started  time.Time
	last     []byte
	greeting *time.Timer
	// joinedAt (guarded by mu) is when the latest peer of the pending
	// greeting's batch joined; sent (guarded by mu) when this replica
	// last published each head itself; greetCount, if set, is told whether a
	// greeting went out or was left out (reannounce), which flood
	// (Config.FloodPublish) allows.
	joinedAt   time.Time
	sent       map[cid.Cid]time.Time
	greetCount func(sent bool)
	flood      bool
	events     *pubsub.TopicEventHandler
	ctx        context.Context
	greeted    chan struct{}

	closeOnce sync.Once
}

// greetDelay gathers the peers that join the topic together (as a new
// replica connects to the mesh) into one re-announcement.
const greetDelay = 100 * time.Millisecond

// NewBroadcaster returns a go-ds-crdt Broadcaster that speaks the store's
// wire format on topic (announcements framed with their head blocks, see
// docs/PROTOCOL.md), with the default limits. Store uses it internally;
// it is exported for peers that run go-ds-crdt directly on the mesh's
// topic, such as test harnesses playing a peer that skips the store's
// checks.
func NewBroadcaster(ps *pubsub.PubSub, topic string, dag ipld.DAGService, log *slog.Logger) (dscrdt.Broadcaster, error) {
	d := DefaultConfig()
	return newBroadcaster(ps, topic, broadcastConfig{maxHeads: d.MaxBroadcastHeads, buffer: d.BroadcastBuffer, repeat: d.RebroadcastInterval}, dag, nil, log)
}

// broadcastConfig are a broadcaster's limits: the heads in one
// announcement, the subscription's buffer, and how long a head announced
// on the topic is not announced again by this replica.
type broadcastConfig struct {
	maxHeads, buffer int
	repeat           time.Duration
	// count, if set, is told how many heads each Broadcast sent and
	// left out.
	count func(sent, suppressed int)
	// greetCount, if set, is told whether each greeting was sent or
	// left out (reannounce); flood says the PubSub floods own messages
	// (Config.FloodPublish), without which none is left out.
	greetCount func(sent bool)
	flood      bool
	// backfill and local, if both set, fill in a history this replica
	// lacks (broadcaster.backfill).
	backfill *Backfill
	local    LocalBlocks
}

// newBroadcaster registers the announcement validator, joins the topic and
// subscribes to it.
func newBroadcaster(ps *pubsub.PubSub, name string, cfg broadcastConfig, dag ipld.DAGService, stored func(cid.Cid), log interface{ Debug(string, ...any) }) (*broadcaster, error) {
	maxHeads, buffer := cfg.maxHeads, cfg.buffer
	validate := func(_ context.Context, _ peer.ID, msg *pubsub.Message) bool {
		d, err := checkBroadcast(msg.GetData(), maxHeads)
		if err != nil {
			return false
		}
		msg.ValidatorData = d // pump reads it instead of decoding again
		return true
	}
	if err := ps.RegisterTopicValidator(name, validate); err != nil {
		return nil, fmt.Errorf("crdt: registering validator on %q: %w", name, err)
	}
	topic, err := ps.Join(name)
	if err != nil {
		_ = ps.UnregisterTopicValidator(name)
		return nil, fmt.Errorf("crdt: joining %q: %w", name, err)
	}
	sub, err := topic.Subscribe(pubsub.WithBufferSize(buffer))
	if err != nil {
		_ = topic.Close()
		_ = ps.UnregisterTopicValidator(name)
		return nil, fmt.Errorf("crdt: subscribing to %q: %w", name, err)
	}
	events, err := topic.EventHandler()
	if err != nil {
		sub.Cancel()
		_ = topic.Close()
		_ = ps.UnregisterTopicValidator(name)
		return nil, fmt.Errorf("crdt: watching peers of %q: %w", name, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &broadcaster{ps: ps, name: name, topic: topic, sub: sub, dag: dag, stored: stored, log: log,
		queue: make(chan []byte, buffer), cancel: cancel, pumped: make(chan struct{}),
		queued: map[cid.Cid]time.Time{}, now: time.Now,
		repeat: cfg.repeat, announced: map[cid.Cid]time.Time{}, covered: map[cid.Cid]time.Time{}, sent: map[cid.Cid]time.Time{}, count: cfg.count, greetCount: cfg.greetCount, flood: cfg.flood,
		backfill: cfg.backfill, local: cfg.local,
		started: time.Now(), events: events, ctx: ctx, greeted: make(chan struct{})}
	go func() {
		defer close(b.pumped)
		b.pump(ctx)
	}()
	go func() {
		defer close(b.greeted)
		b.greet(ctx)
	}()
	return b, nil
}

// greet re-announces this replica's latest announcement when peers join
// the topic during its first repeat interval (RebroadcastInterval).
//
// A node writes its first records (its advertisement) as it starts,
// before gossipsub has a mesh for the topic: those announcements reach
// few peers or none, and the rest would learn of the records only from
// gossip, if at all, or at the next periodic re-announcement. Processors
// that rank one another from the advertisements would meanwhile disagree.
// The latest announcement names heads that cover every record this
// replica held when it was made, so one re-announcement per batch of
// joins catches the newcomers up. A replica that has been on the topic
// longer leaves it to the periodic re-announcement: a mesh that grows
// by one node does not make every replica speak.
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
		b.joinedAt = b.now()
		if b.greeting == nil {
			b.greeting = time.AfterFunc(greetDelay, b.reannounce)
		}
		b.mu.Unlock()
	}
}

// reannounce publishes this replica's latest announcement again, with its
// head blocks, unless the PubSub floods own messages and this replica
// published every head it names itself after the batch's latest peer
// joined (greetingNeeded). The timer starts even before there is one:
// go-ds-crdt announces a write after Put returns, and one made as the
// peer joined may have missed it.
func (b *broadcaster) reannounce() {
	b.mu.Lock()
	b.greeting = nil
	last, since := b.last, b.joinedAt
	b.mu.Unlock()
	if last == nil || b.ctx.Err() != nil {
		return
	}
	sent := !b.flood || b.greetingNeeded(last, since)
	if b.greetCount != nil {
		b.greetCount(sent)
	}
	if !sent {
		return
	}
	if err := b.publish(b.ctx, last); err != nil {
		b.log.Debug("re-announcing heads to new peers", "err", err)
	}
}

// greetingNeeded reports whether announce names a head that this replica
// did not publish itself at or after since: when every replica that has
// written greets each batch of joins, a busy store's writers greeted the
// joined peers with the heads they had just announced to them
// (greetings were up to a third of a job store's messages with 100
// processors on 2 cores). An announcement
// this replica published after it saw the join reached the joined peer
// (gossipsub floods a node's own messages to every subscriber it knows,
// Config.FloodPublish); one that another replica published, or this
// one's own echo, proves nothing: the other may not have known the peer
// yet.
func (b *broadcaster) greetingNeeded(announce []byte, since time.Time) bool {
	var msg crdtpb.CRDTBroadcast
	if proto.Unmarshal(announce, &msg) != nil || len(msg.Heads) == 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, h := range msg.Heads {
		c, err := cid.Cast(h.GetCid())
		if err != nil {
			return true
		}
		if at, ok := b.sent[c]; !ok || at.Before(since) {
			return true
		}
	}
	return false
}

// young reports whether this replica is within its first repeat interval
// on the topic, when it greets joining peers (greet).
func (b *broadcaster) young() bool {
	return b.repeat > 0 && b.now().Sub(b.started) < b.repeat
}

// publish sends announcement on the topic with the head blocks it names.
func (b *broadcaster) publish(ctx context.Context, announce []byte) error {
	b.noteSent(announce)
	return b.topic.Publish(ctx, encodeBroadcast(announce, b.headBlocks(ctx, announce)))
}

// noteSent marks the heads of announce as published by this replica now,
// for greetingNeeded.
func (b *broadcaster) noteSent(announce []byte) {
	var msg crdtpb.CRDTBroadcast
	if b.repeat <= 0 || proto.Unmarshal(announce, &msg) != nil {
		return
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	trim(b.sent, now, b.repeat)
	for _, h := range msg.Heads {
		if c, err := cid.Cast(h.GetCid()); err == nil {
			b.sent[c] = now
		}
	}
}

// Broadcast publishes go-ds-crdt's announcement with the announced head
// blocks this replica holds, less the heads announced on the topic within
// the last repeat (suppress); with none left it publishes nothing.
func (b *broadcaster) Broadcast(ctx context.Context, data []byte) error {
	if b.young() {
		b.mu.Lock()
		b.last = data
		b.mu.Unlock()
	}
	data, ok := b.suppress(data)
	if !ok {
		return nil
	}
	return b.publish(ctx, data)
}

// suppress leaves out of an announcement the heads announced on the topic
// within the last repeat, by this replica or any other, and the heads a
// broadcast block named as its parent (covered), and marks the rest
// announced now; false: none is left.
//
// go-ds-crdt re-announces every RebroadcastInterval all of a replica's
// heads that no other replica announced since its last re-announcement,
// its own new heads included, so under a stream of writes each replica
// re-announced the heads every other replica had just announced too, with
// their blocks: a third of the store's messages and most of its bytes. Now
// a head is announced about once per interval in the whole mesh, by
// whichever replica's timer comes first, and still by its only holder
// when no other replica has it. A head that a later delta names as its
// parent is not announced again at all: a replica still walking that delta
// holds it as a head for a while, but whoever gets the delta walks to the
// head, and the delta is announced in its turn. A replica that missed an
// announcement gets it from gossipsub's own gossip within seconds, or from
// the next re-announcement of the head or of a delta above it.
func (b *broadcaster) suppress(announce []byte) ([]byte, bool) {
	var msg crdtpb.CRDTBroadcast
	if b.repeat <= 0 || proto.Unmarshal(announce, &msg) != nil || len(msg.Heads) == 0 {
		return announce, true
	}
	now := b.now()
	kept := msg.Heads[:0:0]
	b.mu.Lock()
	for _, h := range msg.Heads {
		c, err := cid.Cast(h.GetCid())
		if err != nil {
			kept = append(kept, h)
			continue
		}
		if at, ok := b.announced[c]; ok && now.Sub(at) < b.repeat {
			continue
		}
		if _, ok := b.covered[c]; ok {
			continue
		}
		b.announced[c] = now
		kept = append(kept, h)
	}
	b.mu.Unlock()
	if b.count != nil {
		b.count(len(kept), len(msg.Heads)-len(kept))
	}
	switch {
	case len(kept) == 0:
		return nil, false
	case len(kept) == len(msg.Heads):
		return announce, true
	}
	out, err := proto.Marshal(&crdtpb.CRDTBroadcast{Heads: kept})
	if err != nil {
		return announce, true
	}
	return out, true
}

// cover marks the parents a broadcast delta names (its links) as covered,
// for suppress.
func (b *broadcaster) cover(parents []*ipld.Link, now time.Time) {
	if b.repeat <= 0 || len(parents) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	trim(b.covered, now, headRepeat)
	for _, l := range parents {
		if _, ok := b.covered[l.Cid]; !ok {
			b.covered[l.Cid] = now
		}
	}
}

// trim keeps m, a map of times by CID, under maxQueuedHeads entries: when
// it is full it drops entries older than age, and everything if that is
// not enough (at worst a head is announced or walked once more).
func trim(m map[cid.Cid]time.Time, now time.Time, age time.Duration) {
	if len(m) < maxQueuedHeads {
		return
	}
	for k, at := range m {
		if now.Sub(at) >= age {
			delete(m, k)
		}
	}
	if len(m) >= maxQueuedHeads {
		clear(m)
	}
}

// heard marks the heads of an announcement received on the topic (this
// replica's own included) as announced now, for suppress.
func (b *broadcaster) heard(heads [][]byte) {
	if b.repeat <= 0 {
		return
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	trim(b.announced, now, b.repeat)
	for _, h := range heads {
		if c, err := cid.Cast(h); err == nil {
			b.announced[c] = now
		}
	}
}

// headBlocks reads the announced heads' blocks from the local DAG service,
// up to maxInlineBytes in all.
func (b *broadcaster) headBlocks(ctx context.Context, announce []byte) []inlineBlock {
	var msg crdtpb.CRDTBroadcast
	if proto.Unmarshal(announce, &msg) != nil {
		return nil
	}
	// Local reads only: a head this replica announces is in its
	// blockstore, and a miss must not wait on the network.
	lctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	var out []inlineBlock
	size := 0
	for _, h := range msg.Heads {
		c, err := cid.Cast(h.GetCid())
		if err != nil || c.Type() != cid.DagProtobuf {
			continue
		}
		nd, err := b.dag.Get(lctx, c)
		if err != nil {
			continue
		}
		raw := nd.RawData()
		if size+len(raw) > maxInlineBytes {
			break
		}
		size += len(raw)
		out = append(out, inlineBlock{cid: c, data: raw})
	}
	return out
}

// pump reads the topic as fast as broadcasts arrive, adds the blocks they
// carry to the DAG service at once, and queues the announcements for
// go-ds-crdt, which walks them one at a time: a head's parent announced by
// a later broadcast is then local when the head is walked, instead of
// being fetched over bitswap.
func (b *broadcaster) pump(ctx context.Context) {
	defer close(b.queue)
	for {
		msg, err := b.sub.Next(ctx)
		if err != nil {
			return // the subscription or ctx is done; both are final
		}
		d, ok := msg.ValidatorData.(decodedBroadcast)
		if !ok {
			continue // the validator lets it through only if it decodes
		}
		b.maybeBackfill(msg.GetFrom(), b.storeBlocks(ctx, d.blocks))
		b.heard(d.heads)
		for _, a := range splitHeads(d.announce) {
			if !b.fresh(a) {
				continue
			}
			select {
			case b.queue <- a:
			case <-ctx.Done():
				return
			}
		}
	}
}

// storeBlocks adds the blocks a broadcast carries to the DAG service,
// except the blocks of heads queued within headRepeat: those were stored
// when they were first announced, and every replica re-announces its
// heads (Config.RebroadcastInterval), so most blocks arrive many times.
// It returns the nodes it stored.
func (b *broadcaster) storeBlocks(ctx context.Context, inline []inlineBlock) (stored []ipld.Node) {
	now := b.now()
	for _, blk := range inline {
		if at, ok := b.queued[blk.cid]; ok && now.Sub(at) < headRepeat {
			continue
		}
		nd, err := inlineNode(blk)
		if err != nil {
			b.log.Debug("a broadcast block", "cid", blk.cid, "err", err)
			continue
		}
		if err := b.dag.Add(ctx, nd); err != nil {
			b.log.Debug("storing a broadcast block", "cid", blk.cid, "err", err)
			continue
		}
		b.cover(nd.Links(), now)
		if b.stored != nil {
			b.stored(blk.cid)
		}
		stored = append(stored, nd)
	}
	return stored
}

// headRepeat is how long a head queued for go-ds-crdt is not queued again.
// Every replica re-announces its heads (Config.RebroadcastInterval), and
// go-ds-crdt walks each announced head in a goroutine of its own: a head
// still being walked, announced again by each of its holders, was walked
// many times at once, each walk fetching the same blocks (under load,
// hundreds of walks per replica waiting on the same fetches). A head
// announced again after headRepeat is queued again: its first walk may
// have failed, and one already processed is skipped by go-ds-crdt.
const headRepeat = 10 * time.Second

// fresh reports whether the one-head announcement a is to be queued: its
// head was not queued within headRepeat. Announcements it cannot read go
// through as they are.
func (b *broadcaster) fresh(a []byte) bool {
	var msg crdtpb.CRDTBroadcast
	if proto.Unmarshal(a, &msg) != nil || len(msg.Heads) != 1 {
		return true
	}
	c, err := cid.Cast(msg.Heads[0].GetCid())
	if err != nil {
		return true
	}
	now := b.now()
	if at, ok := b.queued[c]; ok && now.Sub(at) < headRepeat {
		return false
	}
	trim(b.queued, now, headRepeat)
	b.queued[c] = now
	return true
}

// maxQueuedHeads bounds fresh's memory.
const maxQueuedHeads = 1 << 14

// Next returns the next announcement for go-ds-crdt.
func (b *broadcaster) Next(ctx context.Context) ([]byte, error) {
	select {
	case a, ok := <-b.queue:
		if !ok {
			// go-ds-crdt stops on ErrNoMoreBroadcast.
			return nil, dscrdt.ErrNoMoreBroadcast
		}
		return a, nil
	case <-ctx.Done():
		return nil, dscrdt.ErrNoMoreBroadcast
	}
}

// Close leaves the topic and removes the validator. The PubSub stays open.
func (b *broadcaster) Close() error {
	var err error
	b.closeOnce.Do(func() {
		b.cancel()
		b.sub.Cancel() // returns once the pubsub loop has dropped the subscription
		<-b.pumped
		b.events.Cancel()
		<-b.greeted
		b.mu.Lock()
		if b.greeting != nil {
			b.greeting.Stop()
		}
		b.mu.Unlock()
		b.filled.Wait()
		err = b.topic.Close()
		if uerr := b.ps.UnregisterTopicValidator(b.name); uerr != nil && err == nil {
			err = uerr
		}
	})
	return err
}
