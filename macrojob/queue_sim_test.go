package macrojob

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// TestSimulation runs many seeded simulations of one room: 3–20 processors on
// a lossy network (10–30% drop, random latency so messages reorder, 5%
// duplicates, in half the runs a partition of 20–120s), random processing
// times, and one processor crashing in the middle of a MicroJob. Each run goes on until the network is quiet, then
// checks that every MicroJob is processed, that all live processors agree on
// one live owner and on the processed set, and — at every step of every
// processor — that processed ids never revert, that no unexpired lock changes
// holder inside a term, and that no turn locks more than M MicroJobs.
func TestSimulation(t *testing.T) {
	seeds := 150
	if testing.Short() {
		seeds = 20
	}
	var total simStats
	for seed := range uint64(seeds) {
		st, err := runSim(t, seed)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		total.add(st)
	}
	t.Logf("%d seeds: %+v", seeds, total)
	if total.crashes < seeds/2 {
		t.Errorf("only %d of %d runs crashed a processor mid-MicroJob", total.crashes, seeds)
	}
	if total.takeovers == 0 || total.imported == 0 {
		t.Errorf("runs exercised %d takeovers and %d kept locks; want both", total.takeovers, total.imported)
	}
}

type simStats struct {
	nodes, items, crashes int
	partitions            int
	takeovers, handoffs   uint64
	imported, reopened    uint64
	delivered, dropped    int
	simTime               time.Duration
}

func (s *simStats) add(o simStats) {
	s.nodes += o.nodes
	s.items += o.items
	s.crashes += o.crashes
	s.partitions += o.partitions
	s.takeovers += o.takeovers
	s.handoffs += o.handoffs
	s.imported += o.imported
	s.reopened += o.reopened
	s.delivered += o.delivered
	s.dropped += o.dropped
	s.simTime += o.simTime
}

const (
	evDeliver = iota
	evTick
	evComplete
	evCrash
)

type simEvent struct {
	at       time.Time
	seq      uint64
	kind     int
	to, from PeerID
	wire     []byte
	item     ID
}

type eventHeap []*simEvent

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(*simEvent)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

type sim struct {
	rng     *rand.Rand
	now     time.Time
	seq     uint64
	events  eventHeap
	names   []PeerID
	qs      map[PeerID]*Queue
	crashed map[PeerID]bool
	busy    map[PeerID]int // MicroJobs in progress
	drop    float64
	m       int
	victim  PeerID
	crashAt int // the victim crashes during its crashAt-th MicroJob
	started map[PeerID]int
	st      simStats

	// A partition between the two sides lasts from splitFrom to splitTo.
	side               map[PeerID]bool
	splitFrom, splitTo time.Time

	beforeBuf, afterBuf view
}

func (s *sim) schedule(e *simEvent) {
	s.seq++
	e.seq = s.seq
	heap.Push(&s.events, e)
}

func (s *sim) live(p PeerID) bool { return !s.crashed[p] }

// publish sends msgs from p to every other processor through the wire
// encoding, dropping, delaying and duplicating at random.
func (s *sim) publish(p PeerID, msgs []Msg) error {
	for _, m := range msgs {
		b, err := Encode(m)
		if err != nil {
			return fmt.Errorf("%s encodes %s: %w", p, describe(m), err)
		}
		for _, to := range s.names {
			if to == p {
				continue
			}
			if s.now.After(s.splitFrom) && s.now.Before(s.splitTo) && s.side[p] != s.side[to] {
				s.st.dropped++
				continue
			}
			copies := 1
			if s.rng.Float64() < 0.05 {
				copies = 2
			}
			for range copies {
				if s.rng.Float64() < s.drop {
					s.st.dropped++
					continue
				}
				lat := time.Millisecond + time.Duration(s.rng.Int64N(int64(800*time.Millisecond)))
				s.schedule(&simEvent{at: s.now.Add(lat), kind: evDeliver, to: to, from: p, wire: b})
			}
		}
	}
	return nil
}

// after runs the checks of one step of p and starts the MicroJobs it got.
func (s *sim) after(p PeerID, before *view, msgs []Msg) error {
	q := s.qs[p]
	if err := checkStep(before, capture(q, &s.afterBuf), s.now); err != nil {
		return fmt.Errorf("%s at %v: %w", p, s.now.Sub(t0), err)
	}
	if err := s.publish(p, msgs); err != nil {
		return err
	}
	ready := q.Ready()
	if len(ready) > s.m {
		return fmt.Errorf("%s locked %d MicroJobs in one turn, M=%d", p, len(ready), s.m)
	}
	for _, id := range ready {
		s.busy[p]++
		s.started[p]++
		dur := time.Second + time.Duration(s.rng.Int64N(int64(40*time.Second)))
		if p == s.victim && s.started[p] == s.crashAt {
			s.schedule(&simEvent{at: s.now.Add(dur / 2), kind: evCrash, to: p})
		}
		s.schedule(&simEvent{at: s.now.Add(dur), kind: evComplete, to: p, item: id})
	}
	return nil
}

func runSim(tb testing.TB, seed uint64) (simStats, error) {
	s, cfg, items, creator := newSim(seed)
	if err := s.start(cfg, items, creator); err != nil {
		return s.st, err
	}
	deadline := t0.Add(6 * time.Hour)
	for s.events.Len() > 0 {
		e := heap.Pop(&s.events).(*simEvent)
		s.now = e.at
		if s.now.After(deadline) {
			_, why := agreement(s.qs, s.live)
			for _, p := range s.names {
				tb.Logf("crashed=%v %s", s.crashed[p], describeQueue(string(p), s.qs[p]))
			}
			return s.st, fmt.Errorf("no quiescence after %v: %s", deadline.Sub(t0), why)
		}
		if s.crashed[e.to] {
			continue
		}
		before := capture(s.qs[e.to], &s.beforeBuf)
		msgs, err := s.handle(e)
		if err != nil {
			return s.st, err
		}
		if e.kind == evCrash {
			continue
		}
		if err := s.after(e.to, before, msgs); err != nil {
			return s.st, err
		}
		if e.kind == evTick && s.quiet() {
			break
		}
	}
	for _, p := range s.names {
		st := s.qs[p].Stats()
		s.st.takeovers += st.Takeovers
		s.st.handoffs += st.Handoffs
		s.st.imported += st.Imported
		s.st.reopened += st.Reopened
	}
	s.st.simTime = s.now.Sub(t0)
	if !s.quiet() {
		_, why := agreement(s.qs, s.live)
		return s.st, fmt.Errorf("ran out of events: %s", why)
	}
	return s.st, nil
}

// newSim draws a simulation from seed: its processors, items, message loss,
// turn size, crash victim and an optional partition. It returns the
// queues' config, the items and the room's creator.
func newSim(seed uint64) (*sim, Config, []ID, PeerID) {
	rng := rand.New(rand.NewPCG(seed, 0x6a6f626d657368))
	n := 3 + rng.IntN(18)
	nItems := 5 + rng.IntN(40)
	s := &sim{
		rng:     rng,
		now:     t0,
		qs:      map[PeerID]*Queue{},
		crashed: map[PeerID]bool{},
		busy:    map[PeerID]int{},
		started: map[PeerID]int{},
		drop:    0.10 + 0.20*rng.Float64(),
		m:       1 + rng.IntN(2),
	}
	cfg := DefaultConfig()
	cfg.ProcessingTimeout = 2 * time.Minute
	cfg.OwnerTimeout = 10 * time.Second
	cfg.Rebroadcast = 2 * time.Second
	cfg.MaxLocksPerTurn = s.m
	items := make([]ID, nItems)
	for i := range items {
		items[i] = ID("m" + strconv.Itoa(i))
	}
	for i := range n {
		s.names = append(s.names, PeerID("p"+strconv.Itoa(i)))
	}
	creator := s.names[rng.IntN(n)]
	s.victim = s.names[rng.IntN(n)]
	s.crashAt = 1 + rng.IntN(2)
	s.st.nodes, s.st.items = n, nItems
	s.side = map[PeerID]bool{}
	if rng.IntN(2) == 0 {
		for _, p := range s.names {
			s.side[p] = rng.IntN(2) == 0
		}
		s.splitFrom = t0.Add(time.Duration(rng.Int64N(int64(60 * time.Second))))
		s.splitTo = s.splitFrom.Add(20*time.Second + time.Duration(rng.Int64N(int64(100*time.Second))))
		s.st.partitions++
	}
	return s, cfg, items, creator
}

// start creates every processor's queue, schedules its first tick, and
// has every processor request work, the creator first.
func (s *sim) start(cfg Config, items []ID, creator PeerID) error {
	rng := s.rng
	for _, p := range s.names {
		q, err := New(cfg, Params{Self: p, Room: "room-sim", Items: items, Creator: p}, s.now)
		if p != creator {
			q, err = New(cfg, Params{Self: p, Room: "room-sim", Items: items, Creator: creator}, s.now)
		}
		if err != nil {
			return err
		}
		s.qs[p] = q
		s.schedule(&simEvent{at: s.now.Add(time.Duration(rng.Int64N(int64(time.Second)))), kind: evTick, to: p})
	}
	// Everyone wants work from the start, the creator first.
	order := append([]PeerID{creator}, s.names...)
	for _, p := range order {
		before := capture(s.qs[p], &s.beforeBuf)
		if err := s.after(p, before, s.qs[p].Request(s.now)); err != nil {
			return err
		}
	}
	return nil
}

// handle applies event e to its processor's queue and returns the
// messages it publishes.
func (s *sim) handle(e *simEvent) ([]Msg, error) {
	q := s.qs[e.to]
	var msgs []Msg
	switch e.kind {
	case evDeliver:
		m, err := Decode(e.wire)
		if err != nil {
			return nil, err
		}
		s.st.delivered++
		if msgs, err = q.Receive(e.from, m, s.now); err != nil {
			return nil, fmt.Errorf("%s receives from %s: %w", e.to, e.from, err)
		}
	case evTick:
		msgs = q.Tick(s.now)
		s.schedule(&simEvent{at: s.now.Add(time.Second), kind: evTick, to: e.to})
	case evComplete:
		var err error
		if msgs, err = q.Complete(e.item, s.now); err != nil {
			return nil, err
		}
		s.busy[e.to]--
		if s.busy[e.to] == 0 && !q.Done() {
			msgs = append(msgs, q.Request(s.now)...)
		}
	case evCrash:
		s.crashed[e.to] = true
		s.st.crashes++
	}
	return msgs, nil
}

// quiet reports the end state: every live processor done, and all of them
// agreeing on one live owner and on the processed set.
func (s *sim) quiet() bool {
	for _, p := range s.names {
		if s.live(p) && !s.qs[p].Done() {
			return false
		}
	}
	_, why := agreement(s.qs, s.live)
	return why == ""
}
