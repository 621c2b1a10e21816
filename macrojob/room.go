package macrojob

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/records"
)

// Room errors.
var (
	// ErrRoomDone is returned by Room.Next once every MicroJob is processed.
	ErrRoomDone = errors.New("macrojob: every MicroJob of the room is processed")
	// ErrRoomClosed is returned after Close.
	ErrRoomClosed = errors.New("macrojob: room closed")
)

// RoomConfig tunes a Room.
type RoomConfig struct {
	// Queue configures the queue state machine. Zero fields take the
	// queue's defaults.
	Queue Config
	// Tick is how often queue time advances while nothing else happens
	// (expiry, re-broadcast, takeover). Default: Queue.Rebroadcast / 5.
	Tick time.Duration
	// LockTTL is how long the room lock in the store holds without a
	// refresh; the room's owner refreshes it at a third of it. Default: 1m.
	LockTTL time.Duration
	// Drop, when set, is asked about every received message; true drops it
	// (fault injection for tests: message loss on the channel).
	Drop func() bool
}

// Validate reports a room config that cannot work, with its zero fields
// taken as their defaults: JoinRoom refuses such a config, so a caller can
// refuse it up front.
func (c RoomConfig) Validate() error {
	return c.withDefaults().Queue.Validate()
}

func (c RoomConfig) withDefaults() RoomConfig {
	c.Queue = c.Queue.withDefaults()
	if c.Tick <= 0 {
		c.Tick = c.Queue.Rebroadcast / 5
	}
	if c.LockTTL <= 0 {
		c.LockTTL = time.Minute
	}
	return c
}

// RoomName is the queue's identity and the suffix of its channel:
// "<jobID>/macro/<index>".
func RoomName(jobID string, macro uint64) RoomID {
	return RoomID(jobID + "/macro/" + strconv.FormatUint(macro, 10))
}

// RoomTopic is the MacroJob channel of a room.
func RoomTopic(room RoomID) string { return p2p.TopicPrefix + "job/" + string(room) }

// Room is one processor's membership of a MacroJob room: the queue state
// machine driven by its gossipsub channel and a clock. All queue access
// happens on the room's own goroutine.
type Room struct {
	Name RoomID

	cfg    RoomConfig
	q      *Queue
	topic  *p2p.Topic[Msg]
	store  LockStore
	jobID  string
	macro  uint64
	self   PeerID
	heard  time.Time // last message from another member (loop only)
	log    *slog.Logger
	ready  chan ID
	cmds   chan func(now time.Time) []Msg
	done   chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	isDone bool
	// settled is when the queue was last seen done with nothing
	// outstanding (Finished); zero while it is not.
	settled time.Time
	owns    bool // whether this node owns the queue
	// settledFn is RoomParams.Settled; spoke whether it was called for
	// the current settled and owned state (loop only).
	settledFn func()
	spoke     bool
	closeMu   sync.Once
	metrics   *Metrics
	counted   Stats // the queue's Stats when last counted
}

// LockStore is what a room needs of the store: its lock is read and
// written there.
type LockStore interface {
	crdt.Getter
	crdt.Writer
}

// RoomParams name the room and this node.
type RoomParams struct {
	Host *p2p.Host
	// Store holds the room lock.
	Store LockStore
	JobID string
	Macro uint64
	// Items are the MacroJob's MicroJob IDs in slot order.
	Items []ID
	// Creator owns the queue first; when it is this node, Join takes the
	// room lock in the store.
	Creator PeerID
	Logger  *slog.Logger
	// Metrics, when set, counts the queue's events. Default nil: none.
	Metrics *Metrics
	// Settled, when set, is called on the room's goroutine when the
	// queue becomes done with nothing outstanding while this node owns
	// it, or this node comes to own such a queue: the node that speaks
	// for the room's completion. It must not block. Default nil.
	Settled func()
}

// JoinRoom joins the room's channel and starts driving its queue.
func JoinRoom(ctx context.Context, p RoomParams, cfg RoomConfig) (*Room, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Queue.Validate(); err != nil {
		return nil, err
	}
	log := p.Logger
	if log == nil {
		log = slog.Default()
	}
	name := RoomName(p.JobID, p.Macro)
	self := PeerID(p.Host.ID().String())
	now := time.Now()
	q, err := New(cfg.Queue, Params{Self: self, Room: name, Items: p.Items, Creator: p.Creator}, now)
	if err != nil {
		return nil, err
	}
	topic, err := p2p.Join(p.Host, p2p.TopicConfig[Msg]{
		// A room's members are its creator and whoever holds its lock
		// (the owner refreshes it): the joiner dials them rather than
		// searching the DHT (PROTOCOL.md, "Finding a room's members").
		Undiscovered: true,
		Reach:        roomMembers(ctx, p, self),
		Name:         RoomTopic(name),
		Kind:         "macrojob",
		MaxSize:      MaxMsgSize,
		Encode:       Encode,
		Decode:       Decode,
		Check: func(_ peer.ID, m Msg) error {
			if m.RoomID() != name {
				return fmt.Errorf("%w: %q", ErrWrongRoom, m.RoomID())
			}
			return nil
		},
		Buffer: 1024,
	})
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	r := &Room{
		Name: name, cfg: cfg, q: q, topic: topic, store: p.Store, jobID: p.JobID, macro: p.Macro,
		self: self, log: log.With("room", string(name)), ready: make(chan ID, 4*len(p.Items)+16),
		cmds: make(chan func(time.Time) []Msg, 16), done: make(chan struct{}), cancel: cancel,
		metrics: p.Metrics, settledFn: p.Settled,
	}
	if p.Creator == self {
		if err := r.refreshLock(ctx, now); err != nil {
			cancel()
			topic.Close()
			return nil, err
		}
	}
	msgs := make(chan p2p.Message[Msg], 1024)
	r.wg.Add(2)
	go r.read(runCtx, msgs)
	go r.loop(runCtx, msgs, q.Snapshot())
	return r, nil
}

// roomMembers names the room members a joiner dials: the creator, and
// the owner who last wrote the room lock when it is someone else.
func roomMembers(ctx context.Context, p RoomParams, self PeerID) []peer.ID {
	var ids []peer.ID
	add := func(s string) {
		if id, err := peer.Decode(s); err == nil && PeerID(s) != self && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	add(string(p.Creator))
	if p.Store != nil {
		if l, ok := records.ReadRoomLock(ctx, p.Store, p.JobID, p.Macro); ok {
			add(l.Owner)
		}
	}
	return ids
}

// refreshLock extends the room lock to a LockTTL from now. The queue
// owner refreshes it at a third of the TTL, and ownership passes every
// turn: a new owner leaves a lock that any member wrote within that third
// as it is, so the store takes one lock write per room per third of the
// TTL however often the queue changes hands.
func (r *Room) refreshLock(ctx context.Context, now time.Time) error {
	if l, ok := records.ReadRoomLock(ctx, r.store, r.jobID, r.macro); ok && l.Expires.Sub(now) > r.cfg.LockTTL-r.cfg.LockTTL/3 {
		return nil
	}
	l := records.RoomLock{Owner: string(r.self), Expires: now.Add(r.cfg.LockTTL).UTC()}
	if err := crdt.PutJSON(ctx, r.store, records.RoomLockKey(r.jobID, r.macro), records.RoomLockType, l); err != nil {
		return fmt.Errorf("macrojob: room lock: %w", err)
	}
	return nil
}

func (r *Room) read(ctx context.Context, out chan<- p2p.Message[Msg]) {
	defer r.wg.Done()
	for {
		m, err := r.topic.Next(ctx)
		if err != nil {
			return
		}
		if m.Local || (r.cfg.Drop != nil && r.cfg.Drop()) {
			continue
		}
		r.metrics.read(m.Value.Kind())
		select {
		case out <- m:
		case <-ctx.Done():
			return
		}
	}
}

func (r *Room) loop(ctx context.Context, in <-chan p2p.Message[Msg], first *Snapshot) {
	defer r.wg.Done()
	defer close(r.done)
	tick := time.NewTicker(r.cfg.Tick)
	defer tick.Stop()
	lockEvery := r.cfg.LockTTL / 3
	lastLock := time.Now()
	// The creator announces the queue at once.
	if r.q.IsOwner() {
		r.publish(ctx, time.Now(), []Msg{first})
	}
	for {
		var out []Msg
		now := time.Now()
		select {
		case <-ctx.Done():
			return
		case m := <-in:
			var err error
			r.heard = now
			out, err = r.q.Receive(PeerID(m.From.String()), m.Value, now)
			if err != nil {
				r.log.Debug("queue message rejected", "from", m.From, "err", err)
			}
		case cmd := <-r.cmds:
			out = cmd(now)
		case <-tick.C:
			out = r.q.Tick(now)
		}
		for _, id := range r.q.Ready() {
			select {
			case r.ready <- id:
			default:
				// Nobody is taking work: the lock expires and the item
				// is offered again.
				r.log.Warn("dropping a ready MicroJob; no worker is waiting", "micro", id)
			}
		}
		r.publish(ctx, now, out)
		if r.metrics != nil {
			st := r.q.Stats()
			r.metrics.count(r.counted, st)
			r.counted = st
		}
		if r.q.IsOwner() && now.Sub(lastLock) >= lockEvery && !r.q.Done() {
			lastLock = now
			if err := r.refreshLock(ctx, now); err != nil && ctx.Err() == nil {
				r.log.Warn("refresh room lock", "err", err)
			}
		}
		r.mu.Lock()
		r.isDone = r.q.Done()
		r.owns = r.q.IsOwner()
		switch {
		case !r.isDone || r.q.Outstanding():
			r.settled = time.Time{}
		case r.settled.IsZero():
			r.settled = now
		}
		speaks := !r.settled.IsZero() && r.owns
		r.mu.Unlock()
		if speaks && !r.spoke && r.settledFn != nil {
			r.settledFn()
		}
		r.spoke = speaks
	}
}

// publish sends the queue's messages, except snapshots while the room's
// channel has no other member: nobody could receive them, and a member
// who joins later gets the state from the owner's answer to its Request
// or the next re-broadcast. Publishing costs a signature, and the node
// checks its own messages too; a room worked by one processor alone made
// most of its snapshots this way. A member heard from within
// OwnerTimeout counts as present even before the topic's peer events name
// it, so that the answer to a newcomer's first Request goes out at once.
// Requests and results always go out: a newcomer has not seen the
// topic's peer events yet when it asks for its first turn.
func (r *Room) publish(ctx context.Context, now time.Time, msgs []Msg) {
	alone := !r.topic.HasPeers() && now.Sub(r.heard) > r.cfg.Queue.OwnerTimeout
	for _, m := range msgs {
		if _, ok := m.(*Snapshot); ok && alone {
			r.metrics.unsent(1)
			continue
		}
		if err := r.topic.Publish(ctx, m); err != nil && ctx.Err() == nil {
			// Lost messages are re-sent by the queue's re-broadcast.
			r.log.Debug("publish queue message", "err", err)
		}
	}
}

func (r *Room) do(ctx context.Context, cmd func(now time.Time) []Msg) error {
	select {
	case r.cmds <- cmd:
		return nil
	case <-r.done:
		return ErrRoomClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Next asks for work and blocks until the queue locks a MicroJob for this
// node. It returns ErrRoomDone when every MicroJob is processed.
func (r *Room) Next(ctx context.Context) (ID, error) {
	return r.next(ctx, r.cfg.Queue.MaxLocksPerTurn)
}

// next is Next for a turn of at most upTo MicroJobs.
func (r *Room) next(ctx context.Context, upTo int) (ID, error) {
	for drained := false; !drained; {
		select {
		case id := <-r.ready:
			ok, err := r.take(ctx, id)
			switch {
			case err != nil:
				return "", err
			case ok:
				return id, nil
			}
		default:
			drained = true
		}
	}
	if r.Done() {
		return "", ErrRoomDone
	}
	if err := r.do(ctx, func(now time.Time) []Msg { return r.q.RequestUpTo(now, upTo) }); err != nil {
		return "", err
	}
	check := time.NewTicker(r.cfg.Tick)
	defer check.Stop()
	for {
		select {
		case id := <-r.ready:
			ok, err := r.take(ctx, id)
			switch {
			case err != nil:
				return "", err
			case ok:
				return id, nil
			}
		case <-check.C:
			if r.Done() {
				return "", ErrRoomDone
			}
		case <-r.done:
			return "", ErrRoomClosed
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// NextBatch is Next, followed by every other MicroJob the queue has
// already locked for this node, up to max in all: an owner's grab comes
// back as one batch, so the caller can run them and write their results
// together. A turn it asks for locks no more than max (and no more than
// MaxLocksPerTurn).
func (r *Room) NextBatch(ctx context.Context, max int) ([]ID, error) {
	id, err := r.next(ctx, max)
	if err != nil {
		return nil, err
	}
	out := []ID{id}
	for len(out) < max {
		select {
		case id := <-r.ready:
			if slices.Contains(out, id) {
				continue
			}
			ok, err := r.take(ctx, id)
			if err != nil {
				// The caller's wait ended: what it has is its turn; id
				// is back for its next call.
				return out, nil
			}
			if ok {
				out = append(out, id)
			}
			continue
		default:
		}
		break
	}
	return out, nil
}

// take reports whether id, read from the ready channel, is this node's
// to run (holds). When ctx ends before that is told, id goes back to the
// channel for the node's next call and take returns ctx's error: dropped,
// a lock this node holds would stay unrun until its ProcessingTimeout.
func (r *Room) take(ctx context.Context, id ID) (bool, error) {
	if r.holds(ctx, id) {
		return true, nil
	}
	if err := ctx.Err(); err != nil {
		select {
		case r.ready <- id:
		default:
		}
		return false, err
	}
	return false, nil
}

// holds reports whether this node still holds an unexpired lock on id: a
// MicroJob that waited in the ready channel may have expired, or been taken
// over, meanwhile, and running it would only duplicate work.
func (r *Room) holds(ctx context.Context, id ID) bool {
	held, err := ask(ctx, r, func(now time.Time) ([]Msg, bool) {
		for _, it := range r.q.Items() {
			if it.ID == id {
				return nil, it.State == Locked && it.Holder == r.self && now.Before(it.Expiry)
			}
		}
		return nil, false
	})
	return err == nil && held
}

// Complete records that this node finished MicroJob id.
func (r *Room) Complete(ctx context.Context, id ID) error {
	err, askErr := ask(ctx, r, func(now time.Time) ([]Msg, error) { return r.q.Complete(id, now) })
	return errors.Join(askErr, err)
}

// CompleteAll records that this node finished every MicroJob of ids, in
// one step of the queue: the owner publishes one snapshot for all of them.
// Unknown ids are skipped; the first error is returned.
func (r *Room) CompleteAll(ctx context.Context, ids []ID) error {
	err, askErr := ask(ctx, r, func(now time.Time) ([]Msg, error) {
		var out []Msg
		var first error
		for _, id := range ids {
			msgs, err := r.q.Complete(id, now)
			if err != nil && first == nil {
				first = err
			}
			out = append(out, msgs...)
		}
		return lastSnapshotOnly(out), first
	})
	return errors.Join(askErr, err)
}

// lastSnapshotOnly drops every snapshot of msgs but the last: each one
// supersedes the ones before it.
func lastSnapshotOnly(msgs []Msg) []Msg {
	last := -1
	for i, m := range msgs {
		if _, ok := m.(*Snapshot); ok {
			last = i
		}
	}
	out := msgs[:0:0]
	for i, m := range msgs {
		if _, ok := m.(*Snapshot); ok && i != last {
			continue
		}
		out = append(out, m)
	}
	return out
}

// Done reports whether every MicroJob of the room is processed.
func (r *Room) Done() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.isDone
}

// Finished reports whether the room needs this node no more: its queue
// is done, with nothing of this node unacknowledged. The owner stays a
// LockTTL longer, answering any late request with its snapshot, so that a
// processor that joins from a lagging store learns at once that the room
// is done; after that the room's lock in the store has expired too, and
// one that finds a MicroJob without a commitment opens the room again.
func (r *Room) Finished() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.settled.IsZero() && (!r.owns || time.Since(r.settled) >= r.cfg.LockTTL)
}

// Learn records that the MicroJobs ids are processed, known from their
// commitments in the store (Queue.Learn).
func (r *Room) Learn(ctx context.Context, ids []ID) error {
	err, askErr := ask(ctx, r, func(now time.Time) ([]Msg, error) { return r.q.Learn(ids, now) })
	return errors.Join(askErr, err)
}

// Owner is the queue's current owner as this node sees it, after the
// commands given to the room before.
func (r *Room) Owner(ctx context.Context) (PeerID, error) {
	return ask(ctx, r, func(time.Time) ([]Msg, PeerID) { return nil, r.q.Owner() })
}

// Stats returns the queue's counters.
func (r *Room) Stats(ctx context.Context) (Stats, error) {
	return ask(ctx, r, func(time.Time) ([]Msg, Stats) { return nil, r.q.Stats() })
}

// ask runs cmd in the room's loop, publishes the messages it returns and
// returns its value. A room that closes before its loop ran cmd answers
// ErrRoomClosed, as does one closed before: the loop takes no command
// after it stops.
func ask[T any](ctx context.Context, r *Room, cmd func(now time.Time) ([]Msg, T)) (T, error) {
	res := make(chan T, 1)
	var zero T
	if err := r.do(ctx, func(now time.Time) []Msg {
		out, v := cmd(now)
		res <- v
		return out
	}); err != nil {
		return zero, err
	}
	select {
	case v := <-res:
		return v, nil
	case <-r.done:
		select {
		case v := <-res: // run as the loop stopped
			return v, nil
		default:
			return zero, ErrRoomClosed
		}
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// Close leaves the room's channel and stops its goroutines.
func (r *Room) Close() error {
	var err error
	r.closeMu.Do(func() {
		r.cancel()
		r.wg.Wait()
		err = r.topic.Close()
	})
	return err
}
