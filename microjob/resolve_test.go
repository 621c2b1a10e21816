package microjob

import (
	"bytes"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
)

// resolveBy settles d as one re-runner's answer out decides it: the
// winner is out's hash, whichever side (if any) it matches.
func resolveBy(v Verdict, d Dispute, out [32]byte, rerunner string) (Verdict, error) {
	h := hex.EncodeToString(out[:])
	return Resolve(v, d, []Vote{{Processor: rerunner, Hash: h}}, h)
}

// disputed is a fixture whose judged verdict holds one dispute between a
// liar's regular MicroJob and an honest verifier.
func disputed(t *testing.T) (f *fixture, v Verdict, d Dispute, liar, honestSide string) {
	f = newFixture(t, nil)
	ver, reg, rpos := f.verifier(t, 0, 0)
	liar = newPeer(t)
	f.replace(t, reg, liar, lieOn(reg.Blocks[rpos]))
	v = f.judge(t)
	if len(v.Disputes) != 1 {
		t.Fatalf("want one dispute, got %+v", v.Disputes)
	}
	return f, v, v.Disputes[0], liar, f.procs[ver.ID]
}

func TestResolveRules(t *testing.T) {
	_, v, d, liar, honestSide := disputed(t)
	before := v.Encode()
	other := hexOf([]byte("a third answer"))

	// A winner that matches neither side names both.
	r, err := Resolve(v, d, []Vote{{newPeer(t), other}, {newPeer(t), other}}, other)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{liar, honestSide}
	slices.Sort(want)
	if !slices.Equal(r.Culprits, want) || len(r.Redo) != 2 || r.Verified {
		t.Fatalf("winner on neither side: culprits %v redo %v", r.Culprits, r.Redo)
	}
	if !bytes.Equal(v.Encode(), before) {
		t.Fatal("Resolve modified its input")
	}
	if _, err := Resolve(r, d, nil, other); !errors.Is(err, ErrUnknownDispute) {
		t.Fatalf("resolving a closed dispute: %v", err)
	}
	bad := map[string][]Vote{
		"a side as re-runner":        {{liar, other}},
		"two votes of one re-runner": {{"q", other}, {"q", other}},
		"a vote that is no hash":     {{"q", "zz"}},
		"a vote without re-runner":   {{"", other}},
	}
	for name, votes := range bad {
		if _, err := Resolve(v, d, votes, other); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Resolve(v, d, nil, "x"); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("a winner that is no hash: %v", err)
	}
}

// TestResolveNamesOnlyLosingSides: re-runners that voted for the losing
// hash are listed in the resolution, sorted by re-runner, whatever order
// they came in, but only the losing side is a culprit.
func TestResolveNamesOnlyLosingSides(t *testing.T) {
	_, v, d, liar, honestSide := disputed(t)
	votes := []Vote{{"r3", d.Hashes[1]}, {"r1", d.Hashes[0]}, {"r2", d.Hashes[1]}}
	r, err := Resolve(v, d, votes, d.Hashes[1])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Culprits, []string{liar}) || slices.Contains(r.Culprits, honestSide) || slices.Contains(r.Culprits, "r1") {
		t.Fatalf("culprits %v, want the liar only", r.Culprits)
	}
	res := r.Resolutions[0]
	wantVotes := []Vote{{"r1", d.Hashes[0]}, {"r2", d.Hashes[1]}, {"r3", d.Hashes[1]}}
	if !slices.Equal(res.Votes, wantVotes) || res.Winner != d.Hashes[1] || !slices.Equal(res.Culprits, []string{liar}) {
		t.Fatalf("resolution %+v", res)
	}
	if _, ok := r.Counts[liar]; ok || r.Counts[honestSide] == 0 {
		t.Fatalf("counts %v", r.Counts)
	}
	// Any order of the same votes gives the same bytes.
	slices.Reverse(votes)
	again, _ := Resolve(v, d, votes, d.Hashes[1])
	if !bytes.Equal(again.Encode(), r.Encode()) {
		t.Fatal("Resolve depends on the order of the votes")
	}
}

// TestUndecide: an undecided dispute leaves the open disputes, names
// nobody, keeps the job unverified and survives the encoding; a culprit
// found elsewhere closes it.
func TestUndecide(t *testing.T) {
	_, v, d, liar, _ := disputed(t)
	plain := v.Encode()
	if strings.Contains(string(plain), `"undecided"`) {
		t.Fatalf("a verdict without undecided disputes names the field: %s", plain)
	}
	votes := []Vote{{"r1", d.Hashes[0]}, {"r2", d.Hashes[1]}}
	u, err := Undecide(v, d, votes, "re-runners exhausted")
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Disputes) != 0 || len(u.Culprits) != 0 || u.Verified || !u.Complete || len(u.Undecided) != 1 {
		t.Fatalf("after Undecide: %+v", u)
	}
	if got := u.Undecided[0]; got.Dispute != d || got.Reason != "re-runners exhausted" || !slices.Equal(got.Votes, votes) {
		t.Fatalf("undecided %+v", got)
	}
	if !bytes.Equal(v.Encode(), plain) {
		t.Fatal("Undecide modified its input")
	}
	b := u.Encode()
	back, err := DecodeVerdict(b)
	if err != nil || !bytes.Equal(back.Encode(), b) {
		t.Fatalf("round trip: %v", err)
	}
	if _, err := Undecide(u, d, votes, "again"); !errors.Is(err, ErrUnknownDispute) {
		t.Fatalf("undeciding a dispute that is not open: %v", err)
	}
	empty := strings.Replace(string(plain), `"results":`, `"undecided":[],"results":`, 1)
	if _, err := DecodeVerdict([]byte(empty)); err == nil {
		t.Fatal("an empty undecided list decoded: it is not canonical")
	}
	// The liar found culprit in another dispute closes this one.
	u.Culprits = append(u.Culprits, liar)
	u.close()
	if len(u.Undecided) != 0 || !slices.Equal(u.Culprits, []string{liar}) {
		t.Fatalf("a culprit's undecided dispute stays: %+v", u.Undecided)
	}
}

func TestResolveIsDeterministic(t *testing.T) {
	_, v, d, _, _ := disputed(t)
	votes := []Vote{{newPeer(t), hexOf(blockOutput(d.Block))}, {newPeer(t), d.Hashes[0]}}
	a, _ := Resolve(v, d, votes, hexOf(blockOutput(d.Block)))
	b, _ := Resolve(v, d, votes, hexOf(blockOutput(d.Block)))
	if !bytes.Equal(a.Encode(), b.Encode()) {
		t.Fatal("Resolve is not deterministic")
	}
}
