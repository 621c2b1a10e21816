package crdt

import (
	"testing"
	"time"

	"github.com/ipfs/go-cid"
)

// TestGreetingNamesTheHeadsThisReplicaMade: a young replica greets the
// peers that joined with the heads it made that are still among its
// current heads (a head another replica made is greeted by its maker),
// less those any replica announced on the topic greetDelay or more after
// the last of them joined (the newcomers heard those, as they would a
// greeting) and those a delta announced since names as its parent. The
// heads it greets with count as announced, so its next greeting for the
// same joiners and its own announcements leave them out.
func TestGreetingNamesTheHeadsThisReplicaMade(t *testing.T) {
	heads := announcedHeads(announcement(t, 4))
	if len(heads) != 4 {
		t.Fatalf("announcement names %d heads, want 4", len(heads))
	}
	at := time.Unix(1000, 0)
	b := &broadcaster{repeat: time.Minute, now: func() time.Time { return at },
		announced: map[cid.Cid]time.Time{}, covered: map[cid.Cid]time.Time{}, mine: map[cid.Cid]time.Time{}}
	b.setHeads(func() []cid.Cid { return heads })
	b.joined = at.Add(-time.Second)
	b.announced[heads[3]] = at.Add(-10 * time.Second) // received from another replica
	if g := b.takeGreeting(); g != nil {
		t.Fatalf("a replica that made no head greets with %v", announcedHeads(g))
	}
	b.made(announcement(t, 4)) // heads 0 to 2 are new: its writes
	if _, ok := b.mine[heads[3]]; ok {
		t.Fatal("a head heard on the topic counts as made by this replica")
	}

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
// its heads, a greeting names every head the replica made.
func TestGreetingBeforeTheStoreIsOpen(t *testing.T) {
	b := &broadcaster{repeat: time.Minute, now: time.Now, announced: map[cid.Cid]time.Time{}, mine: map[cid.Cid]time.Time{}}
	if g := b.takeGreeting(); g != nil {
		t.Fatalf("a replica that announced nothing greets with %v", announcedHeads(g))
	}
	b.made(announcement(t, 2))
	if got := announcedHeads(b.takeGreeting()); len(got) != 2 {
		t.Fatalf("greeting names %d heads, want the 2 it made", len(got))
	}
}
