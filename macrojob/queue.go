package macrojob

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Chooser picks the next owner among the pending requesters. seed is derived
// from public queue state (see ChoiceSeed), so anyone holding the snapshots can
// recompute the choice. Choose must return an index into candidates; the
// dispatch package plugs its weighted choice in here.
type Chooser interface {
	Choose(candidates []PeerID, seed []byte) int
}

// PeerID names a processor. It holds a libp2p peer.ID as a string, which keeps
// this package free of libp2p.
type PeerID string

// RoomID names a MacroJob room, and so its queue.
type RoomID string

// ID names one MicroJob.
type ID string

// Queue errors. Receive, Complete and New wrap them; match with errors.Is.
var (
	ErrInvalidConfig = errors.New("macrojob: invalid queue config")
	ErrWrongRoom     = errors.New("macrojob: message for another room")
	ErrUnknownItem   = errors.New("macrojob: unknown MicroJob")
	ErrItemsMismatch = errors.New("macrojob: snapshot of another item list")
	ErrForged        = errors.New("macrojob: sender may not publish this snapshot")
	ErrRoomFull      = errors.New("macrojob: queue has its maximum of members")
)

// Params names the queue and this node.
type Params struct {
	// Self is this processor.
	Self PeerID
	// Room is the MacroJob room the queue belongs to.
	Room RoomID
	// Items are the MicroJob ids of the MacroJob, in slicing order.
	Items []ID
	// Creator is the processor that took the room; it owns the queue first.
	Creator PeerID
}

// Stats counts what a queue has done; the network wrapper exports them as
// metrics.
type Stats struct {
	Handoffs  uint64 // ownership passed by this node to a requester
	Takeovers uint64 // ownership taken by this node under the successor rule
	StepDowns uint64 // this node's ownership ended by a newer snapshot of another term
	Locks     uint64 // MicroJobs this node locked for itself as owner
	Reopened  uint64 // expired locks this node reopened as owner
	Imported  uint64 // locks this node kept from a losing term's snapshot
	Published uint64 // messages returned for publishing
}

type lock struct {
	state  ItemState
	holder PeerID
	expiry int64 // Unix nanoseconds, queue time
}

// Queue is the MicroJob queue of one MacroJob room as seen by one processor.
// It is a pure state machine: every method takes the queue time, changes
// state and returns the messages to publish on the room's channel; it starts
// no goroutines and reads no clock. It is not safe for concurrent use.
type Queue struct {
	cfg    Config
	self   PeerID
	room   RoomID
	ids    []ID
	index  map[ID]int
	digest [32]byte

	// The newest snapshot, with the processed union applied.
	clock   Clock
	owner   PeerID
	author  PeerID
	members []PeerID
	pending []PeerID
	items   []lock

	processed      []bool // union of every processed id seen
	processedCount int

	// authored is the handoff snapshot this node produced, re-published until
	// the new owner is heard.
	authored   *Snapshot
	heardOwner bool
	lastHeard  time.Time // last sign of life of the current owner

	lastBroadcast time.Time
	wanting       bool
	wantUpTo      int // most items the pending request locks, 1..MaxLocksPerTurn
	lastRequest   time.Time
	unacked       map[int]bool // own results not yet in an owner snapshot
	// learned are MicroJobs known processed from elsewhere (Learn) before
	// any snapshot came; the first snapshot that lacks one is told.
	learned map[int]bool
	// heard are requests this node saw while not owner, with the time last
	// heard; they join the pending list if ownership comes here, so that
	// requests raced by a handoff wait for no re-send.
	heard       map[PeerID]time.Time
	lastResults time.Time
	ready       []ID
	stats       Stats
}

// New creates the queue of a room. The creator starts as owner at clock
// (1, creator, 0); every other processor starts from the same genesis view
// (clock 0, all items open, owned by the creator) and adopts the first
// snapshot it receives. New publishes nothing: the creator's first Request or
// Tick does.
func New(cfg Config, p Params, now time.Time) (*Queue, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkID("self", string(p.Self)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if err := checkID("creator", string(p.Creator)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if err := checkID("room", string(p.Room)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if len(p.Items) == 0 || len(p.Items) > MaxItems {
		return nil, fmt.Errorf("%w: %d items (1..%d)", ErrInvalidConfig, len(p.Items), MaxItems)
	}
	q := &Queue{
		cfg:       cfg,
		self:      p.Self,
		room:      p.Room,
		ids:       slices.Clone(p.Items),
		index:     make(map[ID]int, len(p.Items)),
		digest:    ItemsDigest(p.Items),
		owner:     p.Creator,
		author:    p.Creator,
		members:   []PeerID{p.Creator},
		items:     make([]lock, len(p.Items)),
		processed: make([]bool, len(p.Items)),
		unacked:   make(map[int]bool),
		learned:   make(map[int]bool),
		heard:     make(map[PeerID]time.Time),
		lastHeard: now,
	}
	for i, id := range p.Items {
		if err := checkID("item", string(id)); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
		if _, dup := q.index[id]; dup {
			return nil, fmt.Errorf("%w: item %q twice", ErrInvalidConfig, id)
		}
		q.index[id] = i
	}
	if p.Self == p.Creator {
		q.clock = Clock{Term: 1, Leader: p.Self}
	}
	return q, nil
}

// IsOwner reports whether this node may change the queue.
func (q *Queue) IsOwner() bool { return q.owner == q.self }

// Owner is the owner named by the newest snapshot this node holds.
func (q *Queue) Owner() PeerID { return q.owner }

// Clock is the clock of the newest snapshot this node holds.
func (q *Queue) Clock() Clock { return q.clock }

// Done reports whether every MicroJob is processed.
func (q *Queue) Done() bool { return q.processedCount == len(q.ids) }

// Stats returns the counters.
func (q *Queue) Stats() Stats { return q.stats }

// Wanting reports whether this node waits for work it requested.
func (q *Queue) Wanting() bool { return q.wanting }

// Ready returns the MicroJobs locked for this node since the last call; the
// caller processes them and reports each with Complete.
func (q *Queue) Ready() []ID {
	r := q.ready
	q.ready = nil
	return r
}

// Item is one MicroJob in this node's view.
type Item struct {
	ID     ID
	State  ItemState
	Holder PeerID
	Expiry time.Time
}

// Items returns this node's view of every MicroJob: the newest snapshot with
// every processed id seen merged in.
func (q *Queue) Items() []Item {
	out := make([]Item, len(q.ids))
	for i, id := range q.ids {
		l := q.items[i]
		out[i] = Item{ID: id, State: l.state, Holder: l.holder}
		if l.state == Locked {
			out[i].Expiry = expiryTime(l.expiry)
		}
	}
	return out
}

// Snapshot returns this node's view as a snapshot message. For the owner it
// is exactly what it publishes; for the genesis view (nothing received yet)
// it is nil.
func (q *Queue) Snapshot() *Snapshot {
	if q.clock.Term == 0 {
		return nil
	}
	s := &Snapshot{
		Room:    q.room,
		Items:   q.digest,
		Clock:   q.clock,
		Owner:   q.owner,
		Author:  q.author,
		Members: slices.Clone(q.members),
		Pending: slices.Clone(q.pending),
		States:  make([]ItemLock, len(q.items)),
	}
	for i, l := range q.items {
		s.States[i] = ItemLock{State: l.state, Holder: l.holder, Expiry: l.expiry}
	}
	return s
}

// Request says that this node wants work. The owner locks up to
// MaxLocksPerTurn open MicroJobs for itself at once (a grab: no message but
// the new snapshot); any other node publishes a Request and re-publishes it
// every Rebroadcast until ownership arrives.
func (q *Queue) Request(now time.Time) []Msg {
	return q.RequestUpTo(now, q.cfg.MaxLocksPerTurn)
}

// RequestUpTo is Request for a turn of at most n MicroJobs (n is held to
// 1..MaxLocksPerTurn): a processor that knows its MicroJobs are slow takes
// no more than it can run before their locks expire. The wire is the same;
// only the owner's grab is smaller.
func (q *Queue) RequestUpTo(now time.Time, n int) []Msg {
	if q.Done() {
		return nil
	}
	q.wanting = true
	q.wantUpTo = min(max(n, 1), q.cfg.MaxLocksPerTurn)
	if q.IsOwner() {
		if q.drive(now) {
			return q.commit(now)
		}
		return nil
	}
	q.lastRequest = now
	return q.out(&Request{Room: q.room})
}

// Complete records that this node finished MicroJob id. The owner publishes a
// new snapshot; any other node publishes a Result and re-publishes it until a
// snapshot from the owner lists id as processed. Completing an id twice is a
// no-op.
func (q *Queue) Complete(id ID, now time.Time) ([]Msg, error) {
	i, ok := q.index[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownItem, id)
	}
	if !q.markProcessed(i) {
		return nil, nil
	}
	if q.IsOwner() {
		q.drive(now)
		return q.commit(now), nil
	}
	return q.out(q.tell(i, now)), nil
}

// tell returns the Result that tells the owner item i is processed, and
// re-sends it every Rebroadcast until an owner snapshot lists i.
func (q *Queue) tell(i int, now time.Time) Msg {
	q.unacked[i] = true
	q.lastResults = now
	return &Result{Room: q.room, ID: q.ids[i]}
}

// Learn records that the MicroJobs ids are processed, as this node learned
// from elsewhere (their commitments in the store) rather than by running
// them. The owner publishes one snapshot for all of them. Any other node
// publishes nothing for an id the snapshot it holds lists as processed:
// the room's members read the same store, and most such MicroJobs are in
// the owner's snapshot already. For the others it publishes a Result,
// re-published until acknowledged like one of its own; before any snapshot
// came, it waits for the first one and answers only what that one lacks.
// Unknown ids are an error and change nothing.
func (q *Queue) Learn(ids []ID, now time.Time) ([]Msg, error) {
	idx := make([]int, 0, len(ids))
	for _, id := range ids {
		i, ok := q.index[id]
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownItem, id)
		}
		idx = append(idx, i)
	}
	changed := false
	var told []Msg
	for _, i := range idx {
		if !q.markProcessed(i) {
			continue
		}
		changed = true
		switch {
		case q.IsOwner():
		case q.clock.Term == 0:
			q.learned[i] = true
		default:
			// The snapshot held lacks it: tell the owner now.
			told = append(told, q.tell(i, now))
		}
	}
	if changed && q.IsOwner() {
		q.drive(now)
		return q.commit(now), nil
	}
	return q.out(told...), nil
}

// Tick advances queue time. The owner reopens expired locks, serves its own
// waiting request and re-publishes its snapshot every Rebroadcast; others
// re-publish their request, unacknowledged results and an unacknowledged
// handoff, and take over when the successor rule says so.
func (q *Queue) Tick(now time.Time) []Msg {
	if q.IsOwner() {
		if q.drive(now) {
			return q.commit(now)
		}
		if now.Sub(q.lastBroadcast) >= q.cfg.Rebroadcast {
			q.lastBroadcast = now
			return q.out(q.Snapshot())
		}
		return nil
	}
	var msgs []Msg
	if q.authored != nil && !q.heardOwner && now.Sub(q.lastBroadcast) >= q.cfg.Rebroadcast {
		q.lastBroadcast = now
		msgs = append(msgs, q.out(q.authored)...)
	}
	if q.wanting && now.Sub(q.lastRequest) >= q.cfg.Rebroadcast {
		q.lastRequest = now
		msgs = append(msgs, q.out(&Request{Room: q.room})...)
	}
	if len(q.unacked) > 0 && now.Sub(q.lastResults) >= q.cfg.Rebroadcast {
		q.lastResults = now
		for i := range q.ids {
			if q.unacked[i] {
				msgs = append(msgs, q.out(&Result{Room: q.room, ID: q.ids[i]})...)
			}
		}
	}
	if d := q.TakeoverAfter(); d > 0 && now.Sub(q.lastHeard) >= d {
		msgs = append(msgs, q.takeover(now)...)
	}
	return msgs
}

// Outstanding reports whether this node still re-sends something the
// room has not acknowledged: a result, a MicroJob learned before any
// snapshot, or a handoff whose new owner was not heard yet.
func (q *Queue) Outstanding() bool {
	return len(q.unacked) > 0 || len(q.learned) > 0 || q.authored != nil && !q.heardOwner
}

// ackResults stops re-sending the results that snapshot s, the current one,
// lists as processed.
func (q *Queue) ackResults(s *Snapshot) {
	for i := range q.unacked {
		if s.States[i].State == Processed {
			delete(q.unacked, i)
		}
	}
}

func (q *Queue) markProcessed(i int) bool {
	if q.processed[i] {
		return false
	}
	q.processed[i] = true
	q.processedCount++
	q.items[i] = lock{state: Processed}
	if q.Done() {
		q.wanting = false
	}
	return true
}

func (q *Queue) out(m ...Msg) []Msg {
	q.stats.Published += uint64(len(m))
	return m
}
