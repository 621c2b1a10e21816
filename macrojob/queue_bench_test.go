package macrojob

import (
	"slices"
	"strconv"
	"testing"
	"time"
)

// benchRoom is one room of n processors delivering every message to every
// other processor through the wire encoding, in order, with no loss.
type benchRoom struct {
	tb    testing.TB
	names []PeerID
	qs    map[PeerID]*Queue
	queue []fuzzEnv
	now   time.Time
}

func newBenchRoom(tb testing.TB, n, items int, room int) *benchRoom {
	r := &benchRoom{tb: tb, qs: map[PeerID]*Queue{}, now: t0}
	for i := range n {
		r.names = append(r.names, PeerID("peer-"+strconv.Itoa(i)))
	}
	ids := make([]ID, items)
	for i := range ids {
		ids[i] = ID("room" + strconv.Itoa(room) + "/micro" + strconv.Itoa(i))
	}
	for _, p := range r.names {
		q, err := New(Config{}, Params{Self: p, Room: RoomID("room" + strconv.Itoa(room)), Items: ids, Creator: r.names[0]}, r.now)
		if err != nil {
			tb.Fatal(err)
		}
		r.qs[p] = q
	}
	return r
}

func (r *benchRoom) send(from PeerID, msgs []Msg) {
	for _, m := range msgs {
		b, err := Encode(m)
		if err != nil {
			r.tb.Fatal(err)
		}
		for _, to := range r.names {
			if to != from {
				r.queue = append(r.queue, fuzzEnv{from: from, to: to, wire: b})
			}
		}
	}
}

func (r *benchRoom) recv(e fuzzEnv) []Msg {
	m, err := Decode(e.wire)
	if err != nil {
		r.tb.Fatal(err)
	}
	out, err := r.qs[e.to].Receive(e.from, m, r.now)
	if err != nil {
		r.tb.Fatal(err)
	}
	return out
}

// work completes at once every MicroJob a processor got (empty compute) and
// asks again.
func (r *benchRoom) work(p PeerID) {
	q := r.qs[p]
	ready := q.Ready()
	for _, id := range ready {
		msgs, err := q.Complete(id, r.now)
		if err != nil {
			r.tb.Fatal(err)
		}
		r.send(p, msgs)
	}
	if len(ready) > 0 && !q.Done() {
		r.send(p, q.Request(r.now))
	}
}

// drain delivers until nothing is in flight.
func (r *benchRoom) drain() {
	for len(r.queue) > 0 {
		e := r.queue[0]
		r.queue = r.queue[1:]
		r.send(e.to, r.recv(e))
		r.work(e.to)
	}
}

// BenchmarkHandoff measures one handoff in process: a processor's Request
// is encoded, decoded and received by the owner, whose handoff snapshot is
// encoded, decoded and received by the requester, which then holds the queue.
// 10 processors, rooms of 11 MicroJobs. Reports p50 and p99.
func BenchmarkHandoff(b *testing.B) {
	var lat []time.Duration
	room := 0
	r := newBenchRoom(b, 10, 11, room)
	next := 1
	b.ResetTimer()
	for range b.N {
		owner := r.qs[r.names[0]].Owner()
		req := r.names[next%len(r.names)]
		next++
		if req == owner {
			req = r.names[next%len(r.names)]
			next++
		}
		start := time.Now()
		reqMsgs := r.qs[req].Request(r.now)
		var snaps []Msg
		for _, m := range reqMsgs {
			wire, _ := Encode(m)
			snaps = append(snaps, r.recv(fuzzEnv{from: req, to: owner, wire: wire})...)
		}
		for _, m := range snaps {
			wire, _ := Encode(m)
			r.recv(fuzzEnv{from: owner, to: req, wire: wire})
		}
		lat = append(lat, time.Since(start))
		if !r.qs[req].IsOwner() {
			b.Fatalf("%s does not hold the queue after its request", req)
		}
		// Tell everyone else, untimed, so the room stays consistent.
		b.StopTimer()
		for _, m := range reqMsgs {
			r.send(req, []Msg{m})
		}
		r.send(owner, snaps)
		r.queue = slices.DeleteFunc(r.queue, func(e fuzzEnv) bool { return e.to == owner || e.to == req })
		r.drain()
		r.work(req)
		r.drain()
		if r.qs[req].Done() {
			room++
			r = newBenchRoom(b, 10, 11, room)
		}
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns/handoff")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns/handoff")
}

// BenchmarkThroughput coordinates whole rooms: 10 processors, 11 MicroJobs
// each, empty compute, every message through the wire encoding to every
// processor. Reports MicroJobs coordinated per second.
func BenchmarkThroughput(b *testing.B) {
	const peers, items = 10, 11
	msgs := 0
	start := time.Now()
	for i := range b.N {
		r := newBenchRoom(b, peers, items, i)
		for _, p := range r.names {
			r.send(p, r.qs[p].Request(r.now))
			r.work(p)
		}
		for len(r.queue) > 0 {
			msgs++
			e := r.queue[0]
			r.queue = r.queue[1:]
			r.send(e.to, r.recv(e))
			r.work(e.to)
		}
		for _, p := range r.names {
			if !r.qs[p].Done() {
				b.Fatalf("room %d stalled at %s", i, describeQueue(string(p), r.qs[p]))
			}
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(b.N*items)/elapsed.Seconds(), "microjobs/s")
	b.ReportMetric(float64(msgs)/float64(b.N*items), "deliveries/microjob")
}
