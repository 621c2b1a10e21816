package meshview_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/test"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/meshview"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/records/recordstest"
)

// groupCands: four "small" (8 GiB) and three "big" (24 GiB) processors,
// all of weight 1, and one kicked-out big one (weight 0).
func groupCands() []meshview.GroupCandidate {
	var out []meshview.GroupCandidate
	for i := range 4 {
		out = append(out, meshview.GroupCandidate{ID: fmt.Sprintf("small-%d", i), CardModel: "small", VRAM: 8192, Weight: 1})
	}
	for i := range 3 {
		out = append(out, meshview.GroupCandidate{ID: fmt.Sprintf("big-%d", i), CardModel: "big", VRAM: 24576, Weight: 1})
	}
	return append(out, meshview.GroupCandidate{ID: "big-kicked", CardModel: "big", VRAM: 24576, Weight: 0})
}

func modelOf(cands []meshview.GroupCandidate, id string) string {
	for _, c := range cands {
		if c.ID == id {
			return c.CardModel
		}
	}
	return ""
}

func TestGroupChoiceOneCardModel(t *testing.T) {
	cands := groupCands()
	info := recordstest.GroupJob(t, 3, "", 0)
	seen := map[string]int{}
	for i := range 200 {
		seed := []byte(fmt.Sprint("seed ", i))
		g, err := meshview.ChooseGroup(info, cands, seed, "chooser")
		if err != nil {
			t.Fatal(err)
		}
		if len(g.Members) != 3 || !slices.IsSorted(g.Members) || len(slices.Compact(slices.Clone(g.Members))) != 3 {
			t.Fatalf("members %v: want 3 sorted, distinct", g.Members)
		}
		for _, m := range g.Members {
			if modelOf(cands, m) != g.CardModel {
				t.Fatalf("member %s is not of the group's card model %s", m, g.CardModel)
			}
			if m == "big-kicked" {
				t.Fatal("a kicked-out processor was chosen")
			}
		}
		if g.Chooser != "chooser" || g.Job != info.ID().String() || g.Version != records.GroupVersion {
			t.Fatalf("group header %+v", g)
		}
		// Deterministic: the same inputs, in any order, give the same group.
		rev := slices.Clone(cands)
		slices.Reverse(rev)
		again, err := meshview.ChooseGroup(info, rev, seed, "chooser")
		if err != nil || !slices.Equal(again.Members, g.Members) || again.CardModel != g.CardModel {
			t.Fatalf("second draw %v (%v), first %v", again.Members, err, g.Members)
		}
		seen[g.CardModel]++
	}
	// Fair to processors: four small and three big candidates of equal
	// weight, so small is drawn about 4/7 of the time; both must occur.
	if seen["small"] < 70 || seen["big"] < 50 {
		t.Fatalf("card models drawn %v in 200 draws, want about 114 small, 86 big", seen)
	}
}

func TestGroupChoiceRespectsRequirements(t *testing.T) {
	cands := groupCands()
	for i := range 50 {
		seed := []byte(fmt.Sprint(i))
		g, err := meshview.ChooseGroup(recordstest.GroupJob(t, 3, "big", 0), cands, seed, "c")
		if err != nil || g.CardModel != "big" {
			t.Fatalf("GPU model \"big\": %+v, %v", g, err)
		}
		g, err = meshview.ChooseGroup(recordstest.GroupJob(t, 2, "", 16384), cands, seed, "c")
		if err != nil || g.CardModel != "big" {
			t.Fatalf("16 GiB minimum: %+v, %v", g, err)
		}
	}
}

func TestGroupChoiceWaitsWithoutEnoughProcessors(t *testing.T) {
	cands := groupCands()
	for _, tc := range []struct {
		name string
		info *jobs.JobInfo
	}{
		{"no model has 5", recordstest.GroupJob(t, 5, "", 0)},
		{"big has 3 unkicked", recordstest.GroupJob(t, 4, "big", 0)},
		{"no such model", recordstest.GroupJob(t, 2, "huge", 0)},
		{"too little VRAM everywhere", recordstest.GroupJob(t, 2, "", 1<<20)},
	} {
		if _, err := meshview.ChooseGroup(tc.info, cands, []byte("s"), "c"); !errors.Is(err, meshview.ErrNoGroup) {
			t.Errorf("%s: err %v, want ErrNoGroup", tc.name, err)
		}
	}
}

// groupRecord makes a record of g as author wrote it.
func groupRecord(t *testing.T, info *jobs.JobInfo, g records.Group, author peer.ID) crdt.Record {
	t.Helper()
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	return crdt.Record{Key: records.GroupKey(info.ID(), author.String()), Type: records.GroupType, Author: author, Payload: b}
}

func TestGroupRecordChecksAndWinner(t *testing.T) {
	info := recordstest.GroupJob(t, 3, "", 0)
	a, b := test.RandPeerIDFatal(t), test.RandPeerIDFatal(t)
	cands := groupCands()
	ga, err := meshview.ChooseGroup(info, cands, []byte("a"), a.String())
	if err != nil {
		t.Fatal(err)
	}
	gb, err := meshview.ChooseGroup(info, cands, []byte("b2"), b.String())
	if err != nil {
		t.Fatal(err)
	}
	ra, rb := groupRecord(t, info, ga, a), groupRecord(t, info, gb, b)
	// The winner is the record with the lower SHA-256 of its payload,
	// whichever order the records come in.
	ha, hb := sha256.Sum256(ra.Payload), sha256.Sum256(rb.Payload)
	want := ga
	if bytes.Compare(hb[:], ha[:]) < 0 {
		want = gb
	}
	for _, recs := range [][]crdt.Record{{ra, rb}, {rb, ra}} {
		g, ok := meshview.PickGroup(info, nil, recs, nil)
		if !ok || g.Chooser != want.Chooser || !slices.Equal(g.Members, want.Members) {
			t.Fatalf("winner %+v, want %+v", g, want)
		}
	}

	// Records that do not check are ignored, with a clear error.
	bad := func(name string, mut func(*records.Group), author peer.ID) {
		t.Helper()
		g := ga
		g.Members = slices.Clone(ga.Members)
		mut(&g)
		r := groupRecord(t, info, g, author)
		if _, err := records.DecodeGroup(info, r.Key, r.Author.String(), r.Payload); !errors.Is(err, records.ErrBadRecord) {
			t.Errorf("%s: err %v, want ErrBadRecord", name, err)
		}
		if _, ok := meshview.PickGroup(info, nil, []crdt.Record{r}, nil); ok {
			t.Errorf("%s: picked", name)
		}
	}
	bad("version", func(g *records.Group) { g.Version = 2 }, a)
	bad("other job", func(g *records.Group) { g.Job = jobs.ID{}.String() }, a)
	bad("written by another", func(g *records.Group) {}, b)
	bad("too few members", func(g *records.Group) { g.Members = g.Members[:2] }, a)
	bad("unsorted", func(g *records.Group) { g.Members[0], g.Members[1] = g.Members[1], g.Members[0] }, a)
	bad("duplicate", func(g *records.Group) { g.Members[1] = g.Members[0]; slices.Sort(g.Members) }, a)
	bad("no card model", func(g *records.Group) { g.CardModel = "" }, a)
	gpu := recordstest.GroupJob(t, 3, "big", 0)
	gg, err := meshview.ChooseGroup(gpu, cands, []byte("a"), a.String())
	if err != nil {
		t.Fatal(err)
	}
	gg.CardModel = "small"
	r := groupRecord(t, gpu, gg, a)
	if _, err := records.DecodeGroup(gpu, r.Key, a.String(), r.Payload); !errors.Is(err, records.ErrBadRecord) {
		t.Errorf("card model other than the required GPU model: %v", err)
	}
	if _, err := records.DecodeGroup(info, ra.Key, a.String(), append(ra.Payload, make([]byte, records.MaxRecord)...)); !errors.Is(err, records.ErrBadRecord) {
		t.Errorf("oversized record: %v", err)
	}
}

func TestGroupReplacementRounds(t *testing.T) {
	info := recordstest.GroupJob(t, 3, "", 0)
	ids := make([]peer.ID, 5)
	for i := range ids {
		ids[i] = test.RandPeerIDFatal(t)
	}
	s := func(i int) string { return ids[i].String() }
	sorted := func(xs ...string) []string { slices.Sort(xs); return xs }
	g0 := records.Group{Version: 1, Job: info.ID().String(), CardModel: "big", Members: sorted(s(0), s(1), s(2)), Chooser: s(4)}
	r0 := groupRecord(t, info, g0, ids[4])
	// Member 1 replaces silent member 2 by member 3.
	g1 := records.Group{Version: 1, Job: g0.Job, CardModel: "big", Members: sorted(s(0), s(1), s(3)), Chooser: s(1), Round: 1, Dropped: []string{s(2)}}
	r1 := groupRecord(t, info, g1, ids[1])
	g, ok := meshview.PickGroup(info, nil, []crdt.Record{r1, r0}, nil)
	if !ok || g.Round != 1 || !g.Has(s(3)) || g.Has(s(2)) {
		t.Fatalf("winner %+v, want round 1 with member 3 for member 2", g)
	}
	// The dropped member has committed meanwhile: the replacement does not
	// hold, round 0 stands.
	if g, _ := meshview.PickGroup(info, nil, []crdt.Record{r1, r0}, map[string]bool{s(2): true}); g.Round != 0 {
		t.Fatalf("a replacement of an active member won: %+v", g)
	}
	// Without round 0 a round-1 record has nothing to extend.
	if _, ok := meshview.PickGroup(info, nil, []crdt.Record{r1}, nil); ok {
		t.Fatal("a round-1 record alone was picked")
	}
	// A non-member may not replace anyone; a replacement must keep the
	// members it does not drop, and drop what it names.
	bad := []records.Group{
		{Version: 1, Job: g0.Job, CardModel: "big", Members: sorted(s(0), s(1), s(3)), Chooser: s(3), Round: 1, Dropped: []string{s(2)}},
		{Version: 1, Job: g0.Job, CardModel: "big", Members: sorted(s(0), s(3), s(4)), Chooser: s(0), Round: 1, Dropped: []string{s(2)}},
		{Version: 1, Job: g0.Job, CardModel: "small", Members: sorted(s(0), s(1), s(3)), Chooser: s(1), Round: 1, Dropped: []string{s(2)}},
	}
	for i, b := range bad {
		r := groupRecord(t, info, b, mustDecode(t, b.Chooser))
		if g, _ := meshview.PickGroup(info, nil, []crdt.Record{r0, r}, nil); g.Round != 0 {
			t.Errorf("bad replacement %d won: %+v", i, g)
		}
	}
	// Dropped must match the round: a round-0 record with drops, or a
	// dropped member still listed, does not decode.
	for _, b := range []records.Group{
		{Version: 1, Job: g0.Job, CardModel: "big", Members: g0.Members, Chooser: s(4), Dropped: []string{s(3)}},
		{Version: 1, Job: g0.Job, CardModel: "big", Members: g0.Members, Chooser: s(4), Round: 1, Dropped: []string{s(0)}},
		{Version: 1, Job: g0.Job, CardModel: "big", Members: g0.Members, Chooser: s(4), Round: 2, Dropped: []string{s(3)}},
	} {
		r := groupRecord(t, info, b, ids[4])
		if _, err := records.DecodeGroup(info, r.Key, s(4), r.Payload); !errors.Is(err, records.ErrBadRecord) {
			t.Errorf("group %+v: err %v", b, err)
		}
	}
}

func mustDecode(t *testing.T, s string) peer.ID {
	t.Helper()
	id, err := peer.Decode(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestGroupReplacementDraw: the next round drops the silent members for
// as many candidates of the group's card model that are neither members
// nor dropped before, the same from any node, and PickGroup takes it over
// the round before while the dropped member stays silent.
func TestGroupReplacementDraw(t *testing.T) {
	info := recordstest.GroupJob(t, 3, "", 0)
	ids := make([]peer.ID, 6)
	cands := make([]meshview.GroupCandidate, len(ids))
	for i := range ids {
		ids[i] = test.RandPeerIDFatal(t)
		cands[i] = meshview.GroupCandidate{ID: ids[i].String(), CardModel: "big", VRAM: 24576, Weight: 1}
	}
	cands = append(cands, meshview.GroupCandidate{ID: "small-0", CardModel: "small", VRAM: 24576, Weight: 1})
	sorted := func(xs ...string) []string { slices.Sort(xs); return xs }
	s := func(i int) string { return ids[i].String() }
	g0 := records.Group{Version: 1, Job: info.ID().String(), CardModel: "big", Members: sorted(s(0), s(1), s(2)), Chooser: s(0)}
	next, fresh, err := meshview.Replacement(info, g0, []string{s(2)}, cands, s(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(fresh) != 1 || g0.Has(fresh[0]) || modelOf(cands, fresh[0]) != "big" {
		t.Fatalf("drawn %v: want one big non-member", fresh)
	}
	if next.Round != 1 || next.Chooser != s(1) || !slices.Equal(next.Dropped, []string{s(2)}) || next.Has(s(2)) || !next.Has(fresh[0]) || len(next.Members) != 3 {
		t.Fatalf("next round %+v", next)
	}
	rev := slices.Clone(cands)
	slices.Reverse(rev)
	if again, _, err := meshview.Replacement(info, g0, []string{s(2)}, rev, s(1)); err != nil || !slices.Equal(again.Members, next.Members) {
		t.Fatalf("another node's draw %v (%v), first %v", again.Members, err, next.Members)
	}
	recs := []crdt.Record{groupRecord(t, info, g0, ids[0]), groupRecord(t, info, next, ids[1])}
	if g, ok := meshview.PickGroup(info, nil, recs, nil); !ok || g.Round != 1 || !slices.Equal(g.Members, next.Members) {
		t.Fatalf("picked %+v, want the replacement", g)
	}
	// Only members and the dropped are left of the card model: no draw.
	few := []meshview.GroupCandidate{cands[0], cands[1], cands[2], cands[6]}
	if _, _, err := meshview.Replacement(info, g0, []string{s(2)}, few, s(1)); !errors.Is(err, meshview.ErrNoGroup) {
		t.Fatalf("no one left to draw: %v, want ErrNoGroup", err)
	}
}
