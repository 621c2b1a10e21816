package macrojob

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"testing"
	"time"
)

func testItems(n int) []ID {
	ids := make([]ID, n)
	for i := range ids {
		ids[i] = ID("m" + strconv.Itoa(i))
	}
	return ids
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	bad := map[string]func(c *Config){
		"rebroadcast not below owner timeout": func(c *Config) { c.Rebroadcast = c.OwnerTimeout },
		"negative processing timeout":         func(c *Config) { c.ProcessingTimeout = -time.Second },
		"negative locks per turn":             func(c *Config) { c.MaxLocksPerTurn = -1 },
		"members over wire limit":             func(c *Config) { c.MaxMembers = MaxMembers + 1 },
	}
	for name, breakIt := range bad {
		t.Run(name, func(t *testing.T) {
			c := DefaultConfig()
			breakIt(&c)
			if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate = %v", err)
			}
			if _, err := New(c, Params{Self: "a", Room: "r", Items: testItems(1), Creator: "a"}, t0); !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("New = %v", err)
			}
		})
	}
}

func TestNewRejects(t *testing.T) {
	cases := map[string]Params{
		"no items":       {Self: "a", Room: "r", Creator: "a"},
		"duplicate item": {Self: "a", Room: "r", Creator: "a", Items: []ID{"m", "m"}},
		"empty item":     {Self: "a", Room: "r", Creator: "a", Items: []ID{""}},
		"no self":        {Room: "r", Creator: "a", Items: testItems(1)},
		"no creator":     {Self: "a", Room: "r", Items: testItems(1)},
		"no room":        {Self: "a", Creator: "a", Items: testItems(1)},
		"too many items": {Self: "a", Room: "r", Creator: "a", Items: testItems(MaxItems + 1)},
	}
	for name, p := range cases {
		if _, err := New(Config{}, p, t0); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: New = %v, want ErrInvalidConfig", name, err)
		}
	}
}

// TestReceiveRejects checks that a message contradicting the queue gets a
// clear error and changes nothing.
func TestReceiveRejects(t *testing.T) {
	newPair := func() (*Queue, *Queue) {
		a, err := New(Config{}, Params{Self: "a", Room: "r", Items: testItems(3), Creator: "a"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		b, err := New(Config{}, Params{Self: "b", Room: "r", Items: testItems(3), Creator: "a"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
	a, _ := newPair()
	snap := a.Snapshot()
	otherItems := a.Snapshot()
	otherItems.Items = ItemsDigest(testItems(4))
	cases := []struct {
		name string
		from PeerID
		msg  Msg
		want error
	}{
		{"request for another room", "c", &Request{Room: "other"}, ErrWrongRoom},
		{"result for another room", "c", &Result{Room: "other", ID: "m0"}, ErrWrongRoom},
		{"result for unknown item", "c", &Result{Room: "r", ID: "m9"}, ErrUnknownItem},
		{"snapshot of other items", "a", otherItems, ErrItemsMismatch},
		{"snapshot relayed by a third peer", "c", snap, ErrForged},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, b := newPair()
			before := describeQueue("b", b)
			msgs, err := b.Receive(c.from, c.msg, t0)
			if !errors.Is(err, c.want) || msgs != nil {
				t.Fatalf("Receive = %v, %v; want %v", msgs, err, c.want)
			}
			if after := describeQueue("b", b); after != before {
				t.Fatalf("rejected message changed the queue:\n%s\n%s", before, after)
			}
		})
	}
}

func TestRoomFull(t *testing.T) {
	cfg := Config{MaxMembers: 2}
	a, err := New(cfg, Params{Self: "a", Room: "r", Items: testItems(1), Creator: "a"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	a.Request(t0) // locks m0
	a.Request(t0) // waits with nothing open, so requests queue instead of taking ownership
	if _, err := a.Receive("b", &Request{Room: "r"}, t0); err != nil {
		t.Fatal(err)
	}
	before := describeQueue("a", a)
	if _, err := a.Receive("c", &Request{Room: "r"}, t0); !errors.Is(err, ErrRoomFull) {
		t.Fatalf("third member: %v, want ErrRoomFull", err)
	}
	if after := describeQueue("a", a); after != before {
		t.Fatalf("rejected request changed the queue:\n%s\n%s", before, after)
	}
}

type fixedChooser int

func (c fixedChooser) Choose([]PeerID, []byte) int { return int(c) }

// TestChooser checks that the injected chooser decides the handoff, and that
// an index out of range falls back to the first requester.
func TestChooser(t *testing.T) {
	for _, c := range []struct {
		pick int
		want PeerID
	}{{0, "b"}, {1, "c"}, {2, "d"}, {7, "b"}, {-1, "b"}} {
		t.Run(fmt.Sprint(c.pick), func(t *testing.T) {
			cfg := Config{Chooser: fixedChooser(c.pick), Logger: slog.New(slog.DiscardHandler)}
			a, err := New(cfg, Params{Self: "a", Room: "r", Items: testItems(1), Creator: "a"}, t0)
			if err != nil {
				t.Fatal(err)
			}
			a.Request(t0) // locks m0 for a
			a.Request(t0) // waits, nothing open, so requests queue up
			for _, p := range []PeerID{"b", "c", "d"} {
				if _, err := a.Receive(p, &Request{Room: "r"}, t0); err != nil {
					t.Fatal(err)
				}
			}
			if a.Owner() != "a" || !slices.Equal(a.pending, []PeerID{"b", "c", "d"}) {
				t.Fatalf("owner %s pending %v", a.Owner(), a.pending)
			}
			// The lock expires; a takes m0 again and passes ownership on.
			msgs := a.Tick(t0.Add(DefaultConfig().ProcessingTimeout))
			if a.Owner() != c.want || len(msgs) != 1 {
				t.Fatalf("handoff to %s (msgs %d), want %s", a.Owner(), len(msgs), c.want)
			}
		})
	}
}

func TestSeededChooserDeterministic(t *testing.T) {
	cands := []PeerID{"a", "b", "c", "d", "e"}
	seen := map[int]bool{}
	for i := range 64 {
		seed := ChoiceSeed("r", Clock{Term: 1, Leader: "a", Counter: uint64(i)})
		x := SeededChooser{}.Choose(cands, seed[:])
		if y := (SeededChooser{}).Choose(cands, seed[:]); x != y {
			t.Fatalf("same seed chose %d then %d", x, y)
		}
		if x < 0 || x >= len(cands) {
			t.Fatalf("index %d out of range", x)
		}
		seen[x] = true
	}
	if len(seen) != len(cands) {
		t.Errorf("64 seeds chose only %v of %d candidates", seen, len(cands))
	}
}

func TestSuccessorOrder(t *testing.T) {
	members := []PeerID{"a", "b", "c", "d", "e"}
	o1 := SuccessorOrder("r", 3, "c", members)
	reversed := slices.Clone(members)
	slices.Reverse(reversed)
	o2 := SuccessorOrder("r", 3, "c", reversed)
	if !slices.Equal(o1, o2) {
		t.Fatalf("order depends on member order: %v vs %v", o1, o2)
	}
	if len(o1) != 4 || slices.Contains(o1, "c") {
		t.Fatalf("order %v must hold every member but the owner", o1)
	}
	// The order rotates with the term, so one processor is not always first.
	firsts := map[PeerID]bool{}
	for term := range uint64(32) {
		firsts[SuccessorOrder("r", term, "c", members)[0]] = true
	}
	if len(firsts) < 3 {
		t.Errorf("first successor over 32 terms: %v", firsts)
	}
}

// TestAvoid: the owner does not lock an item Avoid names while others are
// open, and locks it once nothing else is, so the queue never stalls.
func TestAvoid(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxLocksPerTurn = 3
	// "v" checks "r1": one processor should not run both.
	cfg.Avoid = func(id ID, taken []ID) bool {
		return id == "v" && slices.Contains(taken, "r1") || id == "r1" && slices.Contains(taken, "v")
	}
	q, err := New(cfg, Params{Self: "a", Room: "r", Items: []ID{"r1", "v", "r2", "r3"}, Creator: "a"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	q.Request(t0)
	if got := q.Ready(); !slices.Equal(got, []ID{"r1", "r2", "r3"}) {
		t.Fatalf("first turn locked %v, want r1 r2 r3 (v avoided beside r1)", got)
	}
	// r1 is still held; v is the only open item: it is locked anyway.
	for _, id := range []ID{"r2", "r3"} {
		if _, err := q.Complete(id, t0); err != nil {
			t.Fatal(err)
		}
	}
	q.Request(t0)
	if got := q.Ready(); !slices.Equal(got, []ID{"v"}) {
		t.Fatalf("second turn locked %v, want v (nothing else is open)", got)
	}
}

// TestRequestUpTo: a request for a smaller turn locks no more than it
// asks, however large M is; the ask is held to 1..M.
func TestRequestUpTo(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxLocksPerTurn = 5
	items := []ID{"m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"}
	q, err := New(cfg, Params{Self: "a", Room: "r", Items: items, Creator: "a"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	turn := func(n, want int) {
		t.Helper()
		q.RequestUpTo(t0, n)
		got := q.Ready()
		if len(got) != want {
			t.Fatalf("RequestUpTo(%d) locked %v, want %d", n, got, want)
		}
		for _, id := range got {
			if _, err := q.Complete(id, t0); err != nil {
				t.Fatal(err)
			}
		}
	}
	turn(2, 2)
	turn(0, 1)  // at least one
	turn(99, 5) // at most M
	turn(3, 2)  // what is left
	if !q.Done() {
		t.Fatal("queue not done")
	}
}
