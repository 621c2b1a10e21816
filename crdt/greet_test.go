package crdt

import (
	"testing"
	"time"

	"github.com/ipfs/go-cid"
)

// TestGreetingLeavesOutHeadsHeardSinceTheJoin: a young replica greets the
// peers that joined with its current heads, less those any replica
// announced on the topic greetDelay or more after the last of them joined
// (the newcomers heard those, as they would a greeting); a replica whose
// heads were all announced since stays silent, and the heads it greets
// with count as announced, so its next greeting for the same joiners and
// its own announcements leave them out. Nor does it greet with a head that
// a delta announced since names as its parent. A replica that wrote nothing
// leaves the greeting to those that did.
func TestGreetingLeavesOutHeadsHeardSinceTheJoin(t *testing.T) {
	heads := announcedHeads(announcement(t, 3))
	if len(heads) != 3 {
		t.Fatalf("announcement names %d heads, want 3", len(heads))
	}
	at := time.Unix(1000, 0)
	b := &broadcaster{repeat: time.Minute, now: func() time.Time { return at },
		announced: map[cid.Cid]time.Time{}, covered: map[cid.Cid]time.Time{}}
	b.setHeads(func() []cid.Cid { return heads })
	b.joined = at.Add(-time.Second)
	if g := b.takeGreeting(); g != nil {
		t.Fatalf("a replica that wrote nothing greets with %v", announcedHeads(g))
	}
	b.last = announcement(t, 1) // it wrote: it greets with its current heads

	b.joined = at.Add(-time.Second)
	b.announced[heads[0]] = b.joined.Add(greetDelay / 2) // as they joined: they may lack it
	b.announced[heads[1]] = b.joined.Add(greetDelay)     // after: they heard it
	got := announcedHeads(b.takeGreeting())
	if len(got) != 2 || !got[0].Equals(heads[0]) || !got[1].Equals(heads[2]) {
		t.Fatalf("greeting names %v, want heads 0 and 2 of %v", got, heads)
	}
	if got := announcedHeads(b.takeGreeting()); len(got) != 0 {
		t.Fatalf("a second greeting for the same joiners names %v, want none", got)
	}

	if _, ok := b.suppress(announcement(t, 3)); ok {
		t.Fatal("the replica's own announcement repeats heads it greeted with within the interval")
	}

	at = at.Add(time.Second)
	b.joined = at.Add(-time.Second) // a later join: nobody announced the heads since
	b.covered[heads[2]] = at        // but a delta above this one was: they walk down to it
	if got := announcedHeads(b.takeGreeting()); len(got) != 2 || !got[0].Equals(heads[0]) || !got[1].Equals(heads[1]) {
		t.Fatalf("greeting for a later join names %v, want heads 0 and 1 of %v", got, heads)
	}
}

// TestGreetingBeforeTheStoreIsOpen: until the store tells the broadcaster
// its heads, a greeting names the heads of the replica's latest own
// announcement, and nothing when it has made none.
func TestGreetingBeforeTheStoreIsOpen(t *testing.T) {
	b := &broadcaster{repeat: time.Minute, now: time.Now, announced: map[cid.Cid]time.Time{}}
	if g := b.takeGreeting(); g != nil {
		t.Fatalf("a replica that announced nothing greets with %v", announcedHeads(g))
	}
	b.last = announcement(t, 2)
	if got := announcedHeads(b.takeGreeting()); len(got) != 2 {
		t.Fatalf("greeting names %d heads, want the 2 of the latest announcement", len(got))
	}
}
