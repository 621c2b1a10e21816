package macrojob

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"time"
)

// drive applies the owner's rules at queue time now and reports whether the
// queue changed: reopen expired locks, lock up to M open items for a waiting
// request of this node, and hand ownership to a pending requester once this
// node has nothing to wait for.
func (q *Queue) drive(now time.Time) bool {
	changed := false
	t := now.UnixNano()
	for i := range q.items {
		if q.items[i].state == Locked && q.items[i].expiry <= t {
			q.items[i] = lock{}
			q.stats.Reopened++
			changed = true
		}
	}
	if q.Done() {
		q.wanting = false
	}
	if q.wanting {
		// Up to M, but no more than a fair share of what is open when
		// others are waiting for a turn: the first owner of a fresh room
		// must not take work its members would do in parallel.
		open := 0
		for i := range q.items {
			if q.items[i].state == Open {
				open++
			}
		}
		limit := min(q.turnLimit(), max(1, open/(1+len(q.pending))))
		var taken []ID
		if q.cfg.Avoid != nil {
			for i := range q.items {
				if q.items[i].state == Locked && q.items[i].holder == q.self {
					taken = append(taken, q.ids[i])
				}
			}
		}
		n := 0
		// Items Avoid names are locked only when nothing else could be.
		for pass := 0; pass < 2 && n == 0; pass++ {
			for i := range q.items {
				if n == limit {
					break
				}
				if q.items[i].state != Open || pass == 0 && q.cfg.Avoid != nil && q.cfg.Avoid(q.ids[i], taken) {
					continue
				}
				q.items[i] = lock{state: Locked, holder: q.self, expiry: now.Add(q.cfg.ProcessingTimeout).UnixNano()}
				q.ready = append(q.ready, q.ids[i])
				taken = append(taken, q.ids[i])
				n++
			}
			if q.cfg.Avoid == nil {
				break
			}
		}
		if n > 0 {
			// A turn ends once it locked something; with nothing open the
			// owner keeps ownership and takes the next item that reopens.
			q.wanting = false
			q.stats.Locks += uint64(n)
			changed = true
		}
	}
	if !q.wanting && len(q.pending) > 0 {
		next := q.choose()
		q.owner = next
		q.pending = slices.DeleteFunc(q.pending, func(p PeerID) bool { return p == next })
		q.stats.Handoffs++
		changed = true
	}
	return changed
}

// choose picks the next owner among the pending requesters.
func (q *Queue) choose() PeerID {
	seed := ChoiceSeed(q.room, Clock{Term: q.clock.Term, Leader: q.clock.Leader, Counter: q.clock.Counter + 1})
	i := q.cfg.Chooser.Choose(slices.Clone(q.pending), seed[:])
	if i < 0 || i >= len(q.pending) {
		// A broken chooser must not stall the queue: fall back to arrival
		// order and say so.
		q.cfg.Logger.Warn("queue chooser returned an index out of range", "room", q.room, "index", i, "candidates", len(q.pending))
		i = 0
	}
	return q.pending[i]
}

// ChoiceSeed is the public seed of the choice made by the handoff snapshot
// with clock c: SHA-256(tag ‖ room ‖ term ‖ leader ‖ counter).
func ChoiceSeed(room RoomID, c Clock) [32]byte {
	h := sha256.New()
	h.Write([]byte("jobmesh/queue/choose/v1"))
	h.Write(binary.AppendUvarint(nil, uint64(len(room))))
	h.Write([]byte(room))
	h.Write(binary.BigEndian.AppendUint64(nil, c.Term))
	h.Write(binary.AppendUvarint(nil, uint64(len(c.Leader))))
	h.Write([]byte(c.Leader))
	h.Write(binary.BigEndian.AppendUint64(nil, c.Counter))
	var s [32]byte
	h.Sum(s[:0])
	return s
}

// SeededChooser picks uniformly with a ChaCha8 generator keyed by the seed,
// so the pick is a pure function of public state.
type SeededChooser struct{}

var _ Chooser = SeededChooser{}

// Choose implements Chooser.
func (SeededChooser) Choose(candidates []PeerID, seed []byte) int {
	var key [32]byte
	copy(key[:], seed)
	return rand.New(rand.NewChaCha8(key)).IntN(len(candidates))
}

// commit publishes the owner's changed queue under the next clock.
func (q *Queue) commit(now time.Time) []Msg {
	q.clock.Counter++
	return q.publish(now)
}

// publish returns the snapshot this node just produced as owner, or as the
// author of a handoff.
func (q *Queue) publish(now time.Time) []Msg {
	q.author = q.self
	q.lastBroadcast = now
	s := q.Snapshot()
	// The snapshot lists this node's own results: as owner it is the
	// room's record of them, as a handoff's author it is re-published
	// until the new owner is heard. They need no Result of their own
	// any more (a node never receives its own messages, so nothing else
	// would acknowledge them).
	q.ackResults(s)
	if !q.IsOwner() {
		// This commit handed ownership over: re-publish it until the new
		// owner is heard.
		q.authored = s
		q.heardOwner = false
		q.lastHeard = now
	}
	return q.out(s)
}

// importLocks keeps the live locks of a losing term's snapshot on items this
// owner has open.
func (q *Queue) importLocks(s *Snapshot, now time.Time) bool {
	t := now.UnixNano()
	changed := false
	for i, st := range s.States {
		if st.State != Locked || st.Expiry <= t || q.items[i].state != Open {
			continue
		}
		if !slices.Contains(q.members, st.Holder) {
			if len(q.members) >= q.cfg.MaxMembers {
				continue
			}
			q.members = append(q.members, st.Holder)
		}
		q.items[i] = lock{state: Locked, holder: st.Holder, expiry: st.Expiry}
		q.stats.Imported++
		changed = true
	}
	return changed
}

// turnLimit is the most items this node's turn locks.
func (q *Queue) turnLimit() int {
	if q.wantUpTo > 0 {
		return q.wantUpTo
	}
	return q.cfg.MaxLocksPerTurn
}
