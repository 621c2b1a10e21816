package macrojob

import (
	"fmt"
	"slices"
	"time"
)

// Receive applies a message from peer from, whose signature the pubsub layer
// has checked. Stale and duplicate messages are not errors; a message that
// contradicts this queue (another room or item list, a snapshot from a peer
// that is neither its owner nor its author) is rejected with an error and
// changes nothing. Messages from this node itself are ignored.
func (q *Queue) Receive(from PeerID, m Msg, now time.Time) ([]Msg, error) {
	if from == q.self {
		return nil, nil
	}
	if m.RoomID() != q.room {
		return nil, fmt.Errorf("%w: %q", ErrWrongRoom, m.RoomID())
	}
	switch m := m.(type) {
	case *Request:
		return q.receiveRequest(from, now)
	case *Result:
		i, ok := q.index[m.ID]
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownItem, m.ID)
		}
		if q.markProcessed(i) && q.IsOwner() {
			q.drive(now)
			return q.commit(now), nil
		}
		return nil, nil
	case *Snapshot:
		return q.receiveSnapshot(from, m, now)
	}
	return nil, fmt.Errorf("%w: message type %T", ErrMalformed, m)
}

func (q *Queue) receiveRequest(from PeerID, now time.Time) ([]Msg, error) {
	if !q.IsOwner() {
		// Only the owner serves requests. Remember it in case ownership
		// comes here; the requester re-sends until it is served anyway.
		_, known := q.heard[from]
		if from != q.owner && (known || len(q.heard) < q.cfg.MaxMembers) {
			q.heard[from] = now
		}
		return nil, nil
	}
	if q.Done() {
		// Nothing left to hand out: the requester joined a done room (its
		// store lags) or missed the last snapshot. It learns from the
		// snapshot, sent at once but at most once per a fifth of
		// Rebroadcast, however many ask.
		if now.Sub(q.lastBroadcast) < q.cfg.Rebroadcast/5 {
			return nil, nil
		}
		q.lastBroadcast = now
		return q.out(q.Snapshot()), nil
	}
	changed, err := q.addPending(from)
	if err != nil {
		return nil, err
	}
	if q.drive(now) || changed {
		return q.commit(now), nil
	}
	return nil, nil
}

// addPending queues requester p, making it a member.
func (q *Queue) addPending(p PeerID) (bool, error) {
	changed := false
	if !slices.Contains(q.members, p) {
		if len(q.members) >= q.cfg.MaxMembers {
			return false, fmt.Errorf("%w: %d", ErrRoomFull, len(q.members))
		}
		q.members = append(q.members, p)
		changed = true
	}
	if p != q.self && !slices.Contains(q.pending, p) {
		q.pending = append(q.pending, p)
		changed = true
	}
	return changed, nil
}

// takeHeard moves the requests heard while not owner, and still fresh (heard
// within two re-send intervals), into the pending list in the order heard.
func (q *Queue) takeHeard(now time.Time) bool {
	type req struct {
		at   time.Time
		peer PeerID
	}
	var rs []req
	for p, at := range q.heard {
		if p != q.self && now.Sub(at) <= 2*q.cfg.Rebroadcast {
			rs = append(rs, req{at, p})
		}
	}
	clear(q.heard)
	slices.SortFunc(rs, func(a, b req) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		if a.peer < b.peer {
			return -1
		}
		return 1
	})
	changed := false
	for _, r := range rs {
		if c, err := q.addPending(r.peer); err == nil && c {
			changed = true
		}
	}
	return changed
}

func (q *Queue) receiveSnapshot(from PeerID, s *Snapshot, now time.Time) ([]Msg, error) {
	if s.Items != q.digest || len(s.States) != len(q.ids) {
		return nil, fmt.Errorf("%w: %d items, digest %x", ErrItemsMismatch, len(s.States), s.Items[:8])
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if from != s.Owner && from != s.Author {
		return nil, fmt.Errorf("%w: %q sent a snapshot of owner %q by %q", ErrForged, from, s.Owner, s.Author)
	}
	// Processed ids merge as a union from every snapshot, old or new.
	merged := false
	for i, st := range s.States {
		if st.State == Processed && q.markProcessed(i) {
			merged = true
		}
	}
	switch c := s.Clock.Compare(q.clock); {
	case c > 0:
		return q.adopt(from, s, now), nil
	case c == 0:
		if from == q.owner {
			q.lastHeard = now
			q.heardOwner = true
		}
		q.ackResults(s)
	case q.IsOwner() && !s.Clock.sameTerm(q.clock):
		// A snapshot of a losing term (after a partition): keep its live
		// locks on items this owner has open, so their holders keep them.
		if q.importLocks(s, now) {
			merged = true
		}
	}
	if merged && q.IsOwner() {
		q.drive(now)
		return q.commit(now), nil
	}
	return nil, nil
}

// adopt makes s, newer than anything held, this node's snapshot.
func (q *Queue) adopt(from PeerID, s *Snapshot, now time.Time) []Msg {
	var msgs []Msg
	wasOwner := q.IsOwner()
	if wasOwner && !s.Clock.sameTerm(q.clock) {
		// Two owners met: this one lost the tie-break. Publish its last
		// snapshot once more so the winner can keep its locks.
		q.stats.StepDowns++
		q.cfg.Logger.Debug("queue owner steps down", "room", q.room, "self", q.self, "clock", q.clock, "winner", s.Clock)
		msgs = q.out(q.Snapshot())
	}
	prevOwner := q.owner
	q.clock = s.Clock
	q.owner = s.Owner
	q.author = s.Author
	q.members = slices.Clone(s.Members)
	q.pending = slices.Clone(s.Pending)
	q.authored = nil
	differs := false
	for i, st := range s.States {
		if q.processed[i] {
			q.items[i] = lock{state: Processed}
			differs = differs || st.State != Processed
			continue
		}
		q.items[i] = lock{state: st.State, holder: st.Holder, expiry: st.Expiry}
	}
	q.ackResults(s)
	var told []Msg
	if len(q.learned) > 0 {
		for i := range q.ids {
			if q.learned[i] && s.States[i].State != Processed {
				told = append(told, q.tell(i, now))
			}
		}
		clear(q.learned)
	}
	// The owner and the author held ownership, so their requests so far
	// are served; a newer one will be heard again.
	delete(q.heard, q.owner)
	delete(q.heard, q.author)
	q.heardOwner = from == q.owner
	if q.heardOwner || q.owner != prevOwner {
		// A new owner gets a full OwnerTimeout to show up.
		q.lastHeard = now
	}
	if !q.IsOwner() {
		return append(msgs, q.out(told...)...)
	}
	// Ownership arrived: take this turn's work, pass ownership on, and
	// publish, which also tells the author its handoff arrived.
	q.pending = slices.DeleteFunc(q.pending, func(p PeerID) bool { return p == q.self })
	differs = q.takeHeard(now) || differs
	if q.drive(now) || differs {
		return append(msgs, q.commit(now)...)
	}
	q.lastBroadcast = now
	return append(msgs, q.out(q.Snapshot())...)
}
