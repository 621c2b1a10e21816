package macrojob

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// t0 is queue time zero of every test.
var t0 = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

// view is the part of a node's state the step invariants look at.
type view struct {
	clock Clock
	items []lock
}

// capture copies q's view into buf's storage.
func capture(q *Queue, buf *view) *view {
	buf.clock = q.clock
	buf.items = append(buf.items[:0], q.items...)
	return buf
}

// checkStep asserts the invariants of one change of a node's view from before
// to after at queue time now:
//   - a processed id never reverts;
//   - inside one term, an unexpired lock never changes holder (no item is
//     locked by two holders at once along the chain of snapshots an owner
//     accepted);
//   - the clock never goes back.
func checkStep(before, after *view, now time.Time) error {
	if after.clock.Compare(before.clock) < 0 {
		return fmt.Errorf("clock went back from %s to %s", before.clock, after.clock)
	}
	t := now.UnixNano()
	for i := range before.items {
		b, a := before.items[i], after.items[i]
		if b.state == Processed && a.state != Processed {
			return fmt.Errorf("item %d reverted from processed to %s", i, a.state)
		}
		if before.clock.sameTerm(after.clock) && b.state == Locked && b.expiry > t &&
			a.state == Locked && a.holder != b.holder {
			return fmt.Errorf("item %d locked by %s until %d moved to %s at %d (clock %s -> %s)",
				i, b.holder, b.expiry, a.holder, t, before.clock, after.clock)
		}
	}
	return nil
}

// describe renders a message for test output.
func describe(m Msg) string {
	switch m := m.(type) {
	case *Request:
		return "request"
	case *Result:
		return "result " + string(m.ID)
	case *Snapshot:
		return fmt.Sprintf("snapshot %s owner=%s author=%s pending=%v", m.Clock, m.Owner, m.Author, m.Pending)
	}
	return fmt.Sprintf("%T", m)
}

// describeQueue renders a node's view for test output, expiries relative to t0.
func describeQueue(name string, q *Queue) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: clock=%s owner=%s author=%s members=%v pending=%v rank=%d want=%v done=%v",
		name, q.clock, q.owner, q.author, q.members, q.pending, q.SuccessorRank(), q.wanting, q.Done())
	b.WriteString("\n ")
	for _, it := range q.Items() {
		b.WriteString(" " + string(it.ID) + "=" + it.State.String())
		if it.State == Locked {
			fmt.Fprintf(&b, "(%s,%s)", it.Holder, it.Expiry.Sub(t0))
		}
	}
	return b.String()
}

// agreement reports whether the live nodes agree on one owner, that owner is
// live, and every node holds the same processed set; it returns the reason
// when not.
func agreement(qs map[PeerID]*Queue, live func(PeerID) bool) (PeerID, string) {
	names := make([]PeerID, 0, len(qs))
	for p := range qs {
		if live(p) {
			names = append(names, p)
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		return "", "no live node"
	}
	first := qs[names[0]]
	owners := 0
	for _, p := range names {
		q := qs[p]
		if q.clock != first.clock || q.owner != first.owner {
			return "", fmt.Sprintf("%s holds %s/%s, %s holds %s/%s", names[0], first.clock, first.owner, p, q.clock, q.owner)
		}
		if !slices.Equal(q.processed, first.processed) {
			return "", fmt.Sprintf("processed sets of %s and %s differ", names[0], p)
		}
		if q.IsOwner() {
			owners++
		}
	}
	if !live(first.owner) {
		return "", fmt.Sprintf("owner %s is not live", first.owner)
	}
	if owners != 1 {
		return "", fmt.Sprintf("%d owners", owners)
	}
	return first.owner, ""
}
