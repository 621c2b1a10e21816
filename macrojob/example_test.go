package macrojob_test

import (
	"fmt"
	"time"

	"github.com/jobmesh/jobmesh/macrojob"
)

// Two processors share a room of two MicroJobs; every message goes through
// the wire encoding as it would over pubsub.
func Example() {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	items := []macrojob.ID{"m1", "m2"}
	a, _ := macrojob.New(macrojob.Config{}, macrojob.Params{Self: "a", Room: "job/0", Items: items, Creator: "a"}, now)
	b, _ := macrojob.New(macrojob.Config{}, macrojob.Params{Self: "b", Room: "job/0", Items: items, Creator: "a"}, now)

	send := func(from macrojob.PeerID, to *macrojob.Queue, msgs []macrojob.Msg) []macrojob.Msg {
		var out []macrojob.Msg
		for _, m := range msgs {
			wire, _ := macrojob.Encode(m)
			d, _ := macrojob.Decode(wire)
			r, err := to.Receive(from, d, now)
			if err != nil {
				fmt.Println("rejected:", err)
			}
			out = append(out, r...)
		}
		return out
	}

	send("a", b, a.Request(now))            // a owns the queue and grabs m1
	handoff := send("b", a, b.Request(now)) // b asks; a hands the queue over
	send("b", a, send("a", b, handoff))     // b takes m2 and tells a
	fmt.Println("a works on", a.Ready(), "- b works on", b.Ready(), "- owner", b.Owner())

	res, _ := a.Complete("m1", now)
	send("a", b, res)
	snap, _ := b.Complete("m2", now)
	send("b", a, snap)
	fmt.Println("done:", a.Done(), b.Done())
	// Output:
	// a works on [m1] - b works on [m2] - owner b
	// done: true true
}
