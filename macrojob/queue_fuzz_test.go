package macrojob

import (
	"errors"
	"testing"
	"time"
)

// FuzzQueue drives four queues with an arbitrary sequence of events —
// requests, completions, ticks, deliveries, drops, duplicates, one crash, and
// forged or malformed messages — and checks that no step panics, that every
// step keeps the invariants of checkStep and at most M locks per turn, that a
// rejected message changes nothing, and that once the network heals every
// MicroJob gets processed and the live queues agree on one owner.
func FuzzQueue(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 3, 0, 3, 0, 2, 20, 1, 1, 0})
	f.Add([]byte{0, 0, 0, 1, 0, 2, 6, 0, 2, 200, 2, 200, 3, 1})
	f.Add([]byte{7, 1, 2, 3, 4, 5, 0, 3, 4, 0, 5, 1, 2, 9})
	f.Fuzz(func(t *testing.T, in []byte) {
		h := newFuzzNet(t)
		for len(in) > 0 {
			in = h.step(in)
		}
		h.heal()
	})
}

type fuzzEnv struct {
	from, to PeerID
	wire     []byte
}

type fuzzNet struct {
	t       *testing.T
	now     time.Time
	names   []PeerID
	qs      map[PeerID]*Queue
	flight  []fuzzEnv
	crashed PeerID
	busy    map[PeerID][]ID
	m       int
}

func newFuzzNet(t *testing.T) *fuzzNet {
	cfg := DefaultConfig()
	cfg.ProcessingTimeout = 30 * time.Second
	cfg.OwnerTimeout = 10 * time.Second
	cfg.Rebroadcast = 2 * time.Second
	cfg.MaxLocksPerTurn = 2
	h := &fuzzNet{t: t, now: t0, names: []PeerID{"a", "b", "c", "d"}, qs: map[PeerID]*Queue{}, busy: map[PeerID][]ID{}, m: 2}
	for _, p := range h.names {
		q, err := New(cfg, Params{Self: p, Room: "r", Items: testItems(6), Creator: "a"}, h.now)
		if err != nil {
			t.Fatal(err)
		}
		h.qs[p] = q
	}
	return h
}

func (h *fuzzNet) live(p PeerID) bool { return p != h.crashed }

// apply runs one event on p and checks the step.
func (h *fuzzNet) apply(p PeerID, ev func(q *Queue) ([]Msg, error)) error {
	q := h.qs[p]
	before := capture(q, &view{})
	beforeText := describeQueue(string(p), q)
	msgs, err := ev(q)
	if err != nil {
		if after := describeQueue(string(p), q); after != beforeText || msgs != nil {
			h.t.Fatalf("%s: rejected event (%v) changed the queue:\n%s\n%s", p, err, beforeText, after)
		}
		return err
	}
	if err := checkStep(before, capture(q, &view{}), h.now); err != nil {
		h.t.Fatalf("%s: %v", p, err)
	}
	r := q.Ready()
	if len(r) > h.m {
		h.t.Fatalf("%s locked %d in one turn", p, len(r))
	}
	h.busy[p] = append(h.busy[p], r...)
	for _, m := range msgs {
		b, err := Encode(m)
		if err != nil {
			h.t.Fatalf("%s publishes what it cannot encode: %v", p, err)
		}
		for _, to := range h.names {
			if to != p {
				h.flight = append(h.flight, fuzzEnv{from: p, to: to, wire: b})
			}
		}
		if len(h.flight) > 5000 {
			// Each event sends a bounded number of messages; a storm is a bug.
			for _, e := range h.flight[len(h.flight)-30:] {
				m, _ := Decode(e.wire)
				h.t.Logf("%s -> %s: %s", e.from, e.to, describe(m))
			}
			h.t.Fatalf("message storm: %d in flight", len(h.flight))
		}
	}
	return nil
}

func (h *fuzzNet) deliver(e fuzzEnv) {
	if !h.live(e.to) || !h.live(e.from) {
		return
	}
	m, err := Decode(e.wire)
	if err != nil {
		h.t.Fatalf("honest message does not decode: %v", err)
	}
	if err := h.apply(e.to, func(q *Queue) ([]Msg, error) { return q.Receive(e.from, m, h.now) }); err != nil {
		h.t.Fatalf("%s rejects an honest message from %s: %v", e.to, e.from, err)
	}
}

// step consumes one event from in and returns the rest.
func (h *fuzzNet) step(in []byte) []byte {
	op := in[0] % 8
	arg := byte(0)
	if len(in) > 1 {
		arg = in[1]
	}
	p := h.names[int(arg)%len(h.names)]
	switch op {
	case 0: // request
		if h.live(p) {
			h.apply(p, func(q *Queue) ([]Msg, error) { return q.Request(h.now), nil })
		}
	case 1: // complete the oldest MicroJob p works on
		if h.live(p) && len(h.busy[p]) > 0 {
			id := h.busy[p][0]
			h.busy[p] = h.busy[p][1:]
			h.apply(p, func(q *Queue) ([]Msg, error) { return q.Complete(id, h.now) })
		}
	case 2: // time passes
		h.now = h.now.Add(time.Duration(arg) * 250 * time.Millisecond)
		for _, p := range h.names {
			if h.live(p) {
				h.apply(p, func(q *Queue) ([]Msg, error) { return q.Tick(h.now), nil })
			}
		}
	case 3, 4, 5: // deliver, drop or duplicate one message in flight
		if len(h.flight) == 0 {
			break
		}
		i := int(arg) % len(h.flight)
		e := h.flight[i]
		switch op {
		case 3:
			h.flight = append(h.flight[:i], h.flight[i+1:]...)
			h.deliver(e)
		case 4:
			h.flight = append(h.flight[:i], h.flight[i+1:]...)
		case 5:
			h.deliver(e)
		}
	case 6: // crash one processor, never the last
		if h.crashed == "" {
			h.crashed = p
		}
	case 7: // malformed or forged input: rejected or harmless, never a panic
		if len(in) < 2 {
			return nil
		}
		n := min(int(arg)%32, len(in)-2)
		h.forge(p, in[2:2+n])
		return in[2+n:]
	}
	return in[min(2, len(in)):]
}

// forge feeds p a decoded garbage message, or a real snapshot relayed by a
// peer that is neither its owner nor its author.
func (h *fuzzNet) forge(p PeerID, b []byte) {
	if !h.live(p) {
		return
	}
	if m, err := Decode(b); err == nil {
		if _, ok := m.(*Snapshot); !ok {
			return // a request or result from nowhere is a legal message
		}
		_ = h.apply(p, func(q *Queue) ([]Msg, error) { return q.Receive("mallory", m, h.now) })
	}
	for _, e := range h.flight {
		m, _ := Decode(e.wire)
		s, ok := m.(*Snapshot)
		if !ok || s.Owner == "zed" || s.Author == "zed" {
			continue
		}
		err := h.apply(p, func(q *Queue) ([]Msg, error) { return q.Receive("zed", s, h.now) })
		if !errors.Is(err, ErrForged) {
			h.t.Fatalf("relayed snapshot from a stranger: %v", err)
		}
		return
	}
}

// heal delivers everything, lets every live processor work and complete,
// and requires that the room finishes with one agreed owner.
func (h *fuzzNet) heal() {
	for range 2000 {
		for _, p := range h.names {
			if !h.live(p) {
				continue
			}
			for _, id := range h.busy[p] {
				h.apply(p, func(q *Queue) ([]Msg, error) { return q.Complete(id, h.now) })
			}
			h.busy[p] = nil
			if q := h.qs[p]; !q.Done() && !q.Wanting() {
				h.apply(p, func(q *Queue) ([]Msg, error) { return q.Request(h.now), nil })
			}
		}
		for i := 0; len(h.flight) > 0; i++ {
			if i == 200 {
				for _, p := range h.names {
					h.t.Logf("live=%v %s", h.live(p), describeQueue(string(p), h.qs[p]))
				}
				for _, e := range h.flight[:min(20, len(h.flight))] {
					m, _ := Decode(e.wire)
					h.t.Logf("%s -> %s: %s", e.from, e.to, describe(m))
				}
				h.t.Fatalf("messages still in flight after %d rounds", i)
			}
			fl := h.flight
			h.flight = nil
			for _, e := range fl {
				h.deliver(e)
			}
		}
		done := true
		for _, p := range h.names {
			done = done && (!h.live(p) || h.qs[p].Done())
		}
		if _, why := agreement(h.qs, h.live); done && why == "" {
			return
		}
		h.now = h.now.Add(time.Second)
		for _, p := range h.names {
			if h.live(p) {
				h.apply(p, func(q *Queue) ([]Msg, error) { return q.Tick(h.now), nil })
			}
		}
	}
	_, why := agreement(h.qs, h.live)
	for _, p := range h.names {
		h.t.Logf("live=%v %s", h.live(p), describeQueue(string(p), h.qs[p]))
	}
	h.t.Fatalf("no agreement after healing: %s", why)
}
