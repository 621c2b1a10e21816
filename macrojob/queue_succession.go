package macrojob

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"time"
)

// outsiderSlots spreads the takeover times of processors that are not members
// of the snapshot over this many OwnerTimeouts.
const outsiderSlots = 4

// TakeoverAfter is the owner silence after which this node takes over, or 0
// for the owner. A member of rank k waits (k+1)×OwnerTimeout. A processor
// that holds the snapshot but is not among its members (its request raced a
// handoff that never arrived) waits until every member had its turn, then a
// further fraction of outsiderSlots×OwnerTimeout fixed by
// SHA-256(tag ‖ room ‖ term ‖ peer), so that outsiders rarely collide and a
// collision is resolved like any two owners.
func (q *Queue) TakeoverAfter() time.Duration {
	if q.IsOwner() {
		return 0
	}
	order := SuccessorOrder(q.room, q.clock.Term, q.owner, q.members)
	t := q.cfg.OwnerTimeout
	if k := slices.Index(order, q.self); k >= 0 {
		return time.Duration(k+1) * t
	}
	h := sha256.New()
	h.Write([]byte("jobmesh/queue/outsider/v1"))
	h.Write(binary.AppendUvarint(nil, uint64(len(q.room))))
	h.Write([]byte(q.room))
	h.Write(binary.BigEndian.AppendUint64(nil, q.clock.Term))
	h.Write([]byte(q.self))
	const steps = 1 << 12
	frac := binary.BigEndian.Uint64(h.Sum(nil)) % steps
	return time.Duration(len(order)+1)*t + time.Duration(frac)*(outsiderSlots*t/steps)
}

// SuccessorRank is this node's place in the successor order of the current
// snapshot (0 = first), or -1 when it is the owner or not a member. The k-th
// successor takes over after (k+1)×OwnerTimeout of owner silence.
func (q *Queue) SuccessorRank() int {
	if q.IsOwner() {
		return -1
	}
	order := SuccessorOrder(q.room, q.clock.Term, q.owner, q.members)
	return slices.Index(order, q.self)
}

// SuccessorOrder ranks the members of a snapshot of the given term, without
// its owner, by SHA-256(tag ‖ room ‖ term ‖ peer), ties by peer ID. Every
// processor holding the snapshot computes the same order.
func SuccessorOrder(room RoomID, term uint64, owner PeerID, members []PeerID) []PeerID {
	type ranked struct {
		key  [32]byte
		peer PeerID
	}
	rs := make([]ranked, 0, len(members))
	for _, m := range members {
		if m == owner {
			continue
		}
		h := sha256.New()
		h.Write([]byte("jobmesh/queue/successor/v1"))
		h.Write(binary.AppendUvarint(nil, uint64(len(room))))
		h.Write([]byte(room))
		h.Write(binary.BigEndian.AppendUint64(nil, term))
		h.Write([]byte(m))
		var r ranked
		h.Sum(r.key[:0])
		r.peer = m
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		if c := compareBytes(a.key[:], b.key[:]); c != 0 {
			return c
		}
		if a.peer < b.peer {
			return -1
		}
		return 1
	})
	out := make([]PeerID, len(rs))
	for i, r := range rs {
		out[i] = r.peer
	}
	return out
}

func compareBytes(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func (q *Queue) takeover(now time.Time) []Msg {
	if !slices.Contains(q.members, q.self) {
		if len(q.members) >= q.cfg.MaxMembers {
			return nil // an outsider of a full room cannot own it
		}
		q.members = append(q.members, q.self)
	}
	q.stats.Takeovers++
	q.cfg.Logger.Debug("queue takeover", "room", q.room, "self", q.self, "silent_owner", q.owner, "clock", q.clock)
	q.clock = Clock{Term: q.clock.Term + 1, Leader: q.self}
	q.owner = q.self
	q.author = q.self
	q.authored = nil
	clear(q.learned) // this snapshot carries them
	q.pending = slices.DeleteFunc(q.pending, func(p PeerID) bool { return p == q.self })
	q.takeHeard(now)
	q.drive(now)
	// Counter 0 of the new term is this snapshot; later changes count up.
	return q.publish(now)
}
