package macrojob

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Wire format of the MicroJob queue messages. Every message starts with the
// protocol version byte and a kind byte; see docs/fragments/queue-protocol.md.
const (
	// WireVersion is the version byte of every queue message. It changes only
	// when the encoding changes, independently of the jobmesh release.
	WireVersion = 1

	// MaxMsgSize bounds an encoded message; larger input is rejected before
	// parsing.
	MaxMsgSize = 1 << 20
	// MaxItems bounds the MicroJobs of one queue.
	MaxItems = 4096
	// MaxMembers bounds the processors a snapshot names.
	MaxMembers = 1024
	// MaxIDLen bounds a room, peer or MicroJob identifier in bytes.
	MaxIDLen = 256
)

// Kind tags a queue message on the wire.
type Kind uint8

// Message kinds.
const (
	KindRequest  Kind = 1
	KindSnapshot Kind = 2
	KindResult   Kind = 3
)

func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindSnapshot:
		return "snapshot"
	case KindResult:
		return "result"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Wire errors. Decode wraps them, so match with errors.Is.
var (
	ErrTooLarge  = errors.New("macrojob: message too large")
	ErrVersion   = errors.New("macrojob: unsupported message version")
	ErrMalformed = errors.New("macrojob: malformed message")
)

// Msg is one queue message. The sender is not part of the message: the pubsub
// layer signs every message with the sender's key and hands the verified
// sender to Queue.Receive.
type Msg interface {
	Kind() Kind
	RoomID() RoomID
}

// Request asks the current owner for ownership of the queue, so that the
// sender may lock work. Requests are idempotent and re-sent until served.
type Request struct {
	Room RoomID
}

// Result says that the sender finished a MicroJob. It is re-sent until a
// snapshot from the owner lists the MicroJob as processed.
type Result struct {
	Room RoomID
	ID   ID
}

// Snapshot is the whole queue as its owner sees it. Only the owner changes
// the queue; every processor keeps the snapshot with the highest Clock.
type Snapshot struct {
	Room RoomID
	// Items is ItemsDigest of the MicroJob ids; States is indexed like them.
	Items [32]byte
	Clock Clock
	// Owner may change the queue from this version on.
	Owner PeerID
	// Author produced this version: the owner itself, or the previous owner
	// when this version hands ownership over.
	Author PeerID
	// Members are the processors that took part (creator, requesters, lock
	// holders); the successor rule ranks them.
	Members []PeerID
	// Pending are the requesters waiting for ownership, in arrival order.
	Pending []PeerID
	States  []ItemLock
}

// ItemLock is the state of one MicroJob in a snapshot.
type ItemLock struct {
	State ItemState
	// Holder and Expiry are set only when State is Locked.
	Holder PeerID
	// Expiry is in queue time, Unix nanoseconds.
	Expiry int64
}

// Kind implements Msg.
func (*Request) Kind() Kind { return KindRequest }

// Kind implements Msg.
func (*Result) Kind() Kind { return KindResult }

// Kind implements Msg.
func (*Snapshot) Kind() Kind { return KindSnapshot }

// RoomID implements Msg.
func (m *Request) RoomID() RoomID { return m.Room }

// RoomID implements Msg.
func (m *Result) RoomID() RoomID { return m.Room }

// RoomID implements Msg.
func (m *Snapshot) RoomID() RoomID { return m.Room }

// ItemState is the state of one MicroJob in the queue.
type ItemState uint8

// Item states.
const (
	Open      ItemState = 0
	Locked    ItemState = 1
	Processed ItemState = 2
)

func (s ItemState) String() string {
	switch s {
	case Open:
		return "open"
	case Locked:
		return "locked"
	case Processed:
		return "processed"
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// Clock orders snapshots. Term changes on every takeover and Leader names the
// processor that started the term; Counter grows with every change inside a
// term. Within one (Term, Leader) there is a single chain of owners, so a
// Clock names one snapshot.
type Clock struct {
	Term    uint64
	Leader  PeerID
	Counter uint64
}

// Compare orders clocks: higher Term first, then the lower Leader (the
// deterministic tie-break between two takeovers of the same term), then
// higher Counter. It returns -1, 0 or +1.
func (c Clock) Compare(o Clock) int {
	switch {
	case c.Term != o.Term:
		if c.Term < o.Term {
			return -1
		}
		return 1
	case c.Leader != o.Leader:
		// The lower peer ID wins, so it compares as newer.
		if c.Leader < o.Leader {
			return 1
		}
		return -1
	case c.Counter != o.Counter:
		if c.Counter < o.Counter {
			return -1
		}
		return 1
	}
	return 0
}

// sameTerm reports whether both clocks belong to the same chain of owners.
func (c Clock) sameTerm(o Clock) bool { return c.Term == o.Term && c.Leader == o.Leader }

func (c Clock) String() string {
	return strconv.FormatUint(c.Term, 10) + "/" + string(c.Leader) + "/" + strconv.FormatUint(c.Counter, 10)
}

// ItemsDigest is SHA-256 over the MicroJob ids, each length-prefixed; a
// snapshot carries it so that queues built from different item lists never mix.
func ItemsDigest(ids []ID) [32]byte {
	h := sha256.New()
	h.Write([]byte("jobmesh/queue/items/v1"))
	var buf [binary.MaxVarintLen64]byte
	for _, id := range ids {
		h.Write(buf[:binary.PutUvarint(buf[:], uint64(len(id)))])
		h.Write([]byte(id))
	}
	var d [32]byte
	h.Sum(d[:0])
	return d
}

// Validate checks the internal consistency of a snapshot: sizes, members
// unique, owner, author, pending and holders among the members, and states.
func (s *Snapshot) Validate() error {
	if err := checkID("room", string(s.Room)); err != nil {
		return err
	}
	if len(s.States) == 0 || len(s.States) > MaxItems {
		return fmt.Errorf("%w: %d items (limit %d)", ErrMalformed, len(s.States), MaxItems)
	}
	if len(s.Members) == 0 || len(s.Members) > MaxMembers {
		return fmt.Errorf("%w: %d members (limit %d)", ErrMalformed, len(s.Members), MaxMembers)
	}
	if s.Clock.Term == 0 || s.Clock.Leader == "" {
		return fmt.Errorf("%w: clock %s has no term", ErrMalformed, s.Clock)
	}
	if err := checkID("leader", string(s.Clock.Leader)); err != nil {
		return err
	}
	idx := make(map[PeerID]int, len(s.Members))
	for i, m := range s.Members {
		if err := checkID("member", string(m)); err != nil {
			return err
		}
		if _, dup := idx[m]; dup {
			return fmt.Errorf("%w: member %q twice", ErrMalformed, m)
		}
		idx[m] = i
	}
	if _, ok := idx[s.Owner]; !ok {
		return fmt.Errorf("%w: owner %q is not a member", ErrMalformed, s.Owner)
	}
	if _, ok := idx[s.Author]; !ok {
		return fmt.Errorf("%w: author %q is not a member", ErrMalformed, s.Author)
	}
	seen := make(map[PeerID]bool, len(s.Pending))
	for _, p := range s.Pending {
		if _, ok := idx[p]; !ok {
			return fmt.Errorf("%w: pending %q is not a member", ErrMalformed, p)
		}
		if p == s.Owner || seen[p] {
			return fmt.Errorf("%w: pending %q repeated or owner", ErrMalformed, p)
		}
		seen[p] = true
	}
	for i, st := range s.States {
		switch st.State {
		case Open, Processed:
			if st.Holder != "" || st.Expiry != 0 {
				return fmt.Errorf("%w: item %d is %s but has a lock", ErrMalformed, i, st.State)
			}
		case Locked:
			if _, ok := idx[st.Holder]; !ok {
				return fmt.Errorf("%w: item %d holder %q is not a member", ErrMalformed, i, st.Holder)
			}
		default:
			return fmt.Errorf("%w: item %d has state %d", ErrMalformed, i, st.State)
		}
	}
	return nil
}

func checkID(what, s string) error {
	if len(s) == 0 || len(s) > MaxIDLen {
		return fmt.Errorf("%w: %s of %d bytes (1..%d)", ErrMalformed, what, len(s), MaxIDLen)
	}
	return nil
}

// Encode returns the wire form of m. It refuses a message that Decode would
// reject, so a node never publishes what its peers cannot read.
func Encode(m Msg) ([]byte, error) {
	b := []byte{WireVersion, byte(m.Kind())}
	switch m := m.(type) {
	case *Request:
		if err := checkID("room", string(m.Room)); err != nil {
			return nil, err
		}
		b = appendString(b, string(m.Room))
	case *Result:
		if err := checkID("room", string(m.Room)); err != nil {
			return nil, err
		}
		if err := checkID("item", string(m.ID)); err != nil {
			return nil, err
		}
		b = appendString(b, string(m.Room))
		b = appendString(b, string(m.ID))
	case *Snapshot:
		if err := m.Validate(); err != nil {
			return nil, err
		}
		idx := make(map[PeerID]uint64, len(m.Members))
		for i, p := range m.Members {
			idx[p] = uint64(i)
		}
		b = appendString(b, string(m.Room))
		b = append(b, m.Items[:]...)
		b = binary.AppendUvarint(b, m.Clock.Term)
		b = appendString(b, string(m.Clock.Leader))
		b = binary.AppendUvarint(b, m.Clock.Counter)
		b = binary.AppendUvarint(b, uint64(len(m.Members)))
		for _, p := range m.Members {
			b = appendString(b, string(p))
		}
		b = binary.AppendUvarint(b, idx[m.Owner])
		b = binary.AppendUvarint(b, idx[m.Author])
		b = binary.AppendUvarint(b, uint64(len(m.Pending)))
		for _, p := range m.Pending {
			b = binary.AppendUvarint(b, idx[p])
		}
		b = binary.AppendUvarint(b, uint64(len(m.States)))
		for _, st := range m.States {
			b = append(b, byte(st.State))
			if st.State == Locked {
				b = binary.AppendUvarint(b, idx[st.Holder])
				b = binary.AppendVarint(b, st.Expiry)
			}
		}
	default:
		return nil, fmt.Errorf("%w: unknown message type %T", ErrMalformed, m)
	}
	if len(b) > MaxMsgSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, len(b))
	}
	return b, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// Decode parses one message. It rejects input over MaxMsgSize, an unknown
// version or kind, any field over its limit, trailing bytes, and a snapshot
// that fails Validate.
func Decode(b []byte) (Msg, error) {
	if len(b) > MaxMsgSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, len(b))
	}
	if len(b) < 2 {
		return nil, fmt.Errorf("%w: %d bytes", ErrMalformed, len(b))
	}
	if b[0] != WireVersion {
		return nil, fmt.Errorf("%w: %d", ErrVersion, b[0])
	}
	r := reader{b: b[2:]}
	var m Msg
	switch Kind(b[1]) {
	case KindRequest:
		m = &Request{Room: RoomID(r.str("room"))}
	case KindResult:
		room := RoomID(r.str("room"))
		m = &Result{Room: room, ID: ID(r.str("item"))}
	case KindSnapshot:
		m = r.snapshot()
	default:
		return nil, fmt.Errorf("%w: kind %d", ErrMalformed, b[1])
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(r.b))
	}
	return m, nil
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
	}
}

func (r *reader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("bad %s", what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint(what string) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("bad %s", what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) byte1(what string) byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.fail("short %s", what)
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) str(what string) string {
	n := r.uvarint(what)
	if r.err != nil {
		return ""
	}
	if n == 0 || n > MaxIDLen || n > uint64(len(r.b)) {
		r.fail("%s of %d bytes", what, n)
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// count reads a list length and checks it against limit before anything is
// allocated, so a forged length cannot make the decoder allocate.
func (r *reader) count(what string, limit int) int {
	n := r.uvarint(what)
	if r.err == nil && n > uint64(limit) {
		r.fail("%d %s (limit %d)", n, what, limit)
	}
	if r.err != nil {
		return 0
	}
	return int(n)
}

func (r *reader) member(s *Snapshot, what string) PeerID {
	i := r.uvarint(what)
	if r.err == nil && i >= uint64(len(s.Members)) {
		r.fail("%s index %d out of %d members", what, i, len(s.Members))
	}
	if r.err != nil {
		return ""
	}
	return s.Members[i]
}

func (r *reader) snapshot() *Snapshot {
	s := &Snapshot{Room: RoomID(r.str("room"))}
	if r.err == nil {
		if len(r.b) < len(s.Items) {
			r.fail("short items digest")
			return nil
		}
		copy(s.Items[:], r.b)
		r.b = r.b[len(s.Items):]
	}
	s.Clock.Term = r.uvarint("term")
	s.Clock.Leader = PeerID(r.str("leader"))
	s.Clock.Counter = r.uvarint("counter")
	n := r.count("members", MaxMembers)
	for range n {
		s.Members = append(s.Members, PeerID(r.str("member")))
	}
	s.Owner = r.member(s, "owner")
	s.Author = r.member(s, "author")
	n = r.count("pending", MaxMembers)
	for range n {
		s.Pending = append(s.Pending, r.member(s, "pending"))
	}
	n = r.count("items", MaxItems)
	if r.err == nil {
		s.States = make([]ItemLock, 0, n)
	}
	for range n {
		st := ItemLock{State: ItemState(r.byte1("state"))}
		if st.State == Locked {
			st.Holder = r.member(s, "holder")
			st.Expiry = r.varint("expiry")
		}
		if r.err != nil {
			return nil
		}
		s.States = append(s.States, st)
	}
	if r.err != nil {
		return nil
	}
	if err := s.Validate(); err != nil {
		r.err = err
		return nil
	}
	return s
}

// equalSnapshot compares two snapshots field by field.
func equalSnapshot(a, b *Snapshot) bool {
	if a.Room != b.Room || !bytes.Equal(a.Items[:], b.Items[:]) || a.Clock != b.Clock ||
		a.Owner != b.Owner || a.Author != b.Author || len(a.Members) != len(b.Members) ||
		len(a.Pending) != len(b.Pending) || len(a.States) != len(b.States) {
		return false
	}
	for i := range a.Members {
		if a.Members[i] != b.Members[i] {
			return false
		}
	}
	for i := range a.Pending {
		if a.Pending[i] != b.Pending[i] {
			return false
		}
	}
	for i := range a.States {
		if a.States[i] != b.States[i] {
			return false
		}
	}
	return true
}

// expiryTime converts a wire expiry to queue time.
func expiryTime(ns int64) time.Time { return time.Unix(0, ns) }
