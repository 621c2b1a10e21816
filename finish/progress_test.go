package finish

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
)

// progressJob is a job of two MacroJobs of three MicroJobs each (two
// regular, one verifier): m0..m2 and m3..m5.
func progressJob(t *testing.T) (*jobs.Plan, []jobs.ID) {
	_, plan := sliceTestJob(t, 1)
	var ids []jobs.ID
	for _, m := range plan.Macros {
		for _, mu := range m.Micros {
			ids = append(ids, mu.ID)
		}
	}
	if len(plan.Macros) != 2 || len(ids) != 6 {
		t.Fatalf("the job has %d MacroJobs and %d MicroJobs", len(plan.Macros), len(ids))
	}
	return plan, ids
}

// progressRecords are records of plan's job with the given commitments
// and disclosures ("m0 a" is a's record of the first MicroJob).
func progressRecords(plan *jobs.Plan, ids []jobs.ID, commits, discl []string) *Records {
	recs := NewRecords()
	parse := func(s string) (jobs.ID, string) {
		m, p, _ := strings.Cut(s, " ")
		return ids[int(m[1]-'0')], p
	}
	for _, c := range commits {
		mid, p := parse(c)
		recs.Commits = append(recs.Commits, microjob.Commitment{JobID: plan.JobID, MicroID: mid, Processor: p})
	}
	for _, d := range discl {
		mid, p := parse(d)
		recs.Discl = append(recs.Discl, microjob.Disclosure{JobID: plan.JobID, MicroID: mid, Processor: p})
	}
	return recs
}

// TestProgress: the one answer to "committed, by whom, is the round
// over, disclosed": for a job of one replica a commitment ends a
// MicroJob's round; for a group job only R distinct committers do, and
// commitments about to be written do not count there.
func TestProgress(t *testing.T) {
	type want struct {
		committedBy   [6]string // by MicroJob, comma-separated
		byOtherThanA  [6]bool
		full          [6]bool
		macroFull     [2]bool
		macroFullAlso [2]bool // with m2, m4 and m5 about to be committed
		unneededByA   []int
		active        []string
		disclosedAll  bool
	}
	cases := []struct {
		name     string
		replicas int
		commits  []string
		discl    []string
		want     want
	}{
		{name: "one replica", replicas: 1,
			commits: []string{"m0 a", "m1 a", "m1 b", "m1 b", "m3 c", "m4 c"}, discl: []string{"m0 a", "m0 b"},
			want: want{committedBy: [6]string{"a", "a,b", "", "c", "c", ""}, byOtherThanA: [6]bool{false, true, false, true, true, false},
				full: [6]bool{true, true, false, true, true, false}, macroFull: [2]bool{false, false}, macroFullAlso: [2]bool{true, true},
				unneededByA: []int{0, 1, 3, 4}, active: []string{"a", "b", "c"}}},
		{name: "group of two", replicas: 2,
			commits: []string{"m0 a", "m0 b", "m1 a", "m1 c", "m2 b", "m2 b", "m2 d", "m3 c", "m3 d", "m4 b", "m5 a"},
			want: want{committedBy: [6]string{"a,b", "a,c", "b,d", "c,d", "b", "a"}, byOtherThanA: [6]bool{true, true, true, true, true, false},
				full: [6]bool{true, true, true, true, false, false}, macroFull: [2]bool{true, false}, macroFullAlso: [2]bool{true, false},
				unneededByA: []int{0, 1, 2, 3, 5}, active: []string{"a", "b", "c", "d"}}},
		{name: "every MicroJob disclosed", replicas: 1,
			commits: []string{"m0 a", "m1 a", "m2 a", "m3 a", "m4 a", "m5 a"},
			discl:   []string{"m0 a", "m1 a", "m2 a", "m3 a", "m4 a", "m5 b", "m5 a"},
			want: want{committedBy: [6]string{"a", "a", "a", "a", "a", "a"}, full: [6]bool{true, true, true, true, true, true},
				macroFull: [2]bool{true, true}, macroFullAlso: [2]bool{true, true},
				unneededByA: []int{0, 1, 2, 3, 4, 5}, active: []string{"a"}, disclosedAll: true}},
		{name: "nothing yet", replicas: 3, want: want{active: []string{}}},
	}
	plan, ids := progressJob(t)
	also := map[jobs.ID]bool{ids[2]: true, ids[4]: true, ids[5]: true}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := ProgressOf(progressRecords(plan, ids, c.commits, c.discl), c.replicas)
			var got want
			for i, mid := range ids {
				got.committedBy[i] = strings.Join(p.CommittedBy(mid), ",")
				got.byOtherThanA[i] = p.CommittedByOther(mid, "a")
				got.full[i] = p.Full(mid)
				if p.Committed(mid) != (got.committedBy[i] != "") {
					t.Fatalf("MicroJob %d: committed %v, by %q", i, p.Committed(mid), got.committedBy[i])
				}
			}
			for k := range 2 {
				got.macroFull[k] = p.MacroFull(&plan.Macros[k], nil)
				got.macroFullAlso[k] = p.MacroFull(&plan.Macros[k], also)
			}
			un := p.Unneeded("a")
			for i, mid := range ids {
				if un[mid] {
					got.unneededByA = append(got.unneededByA, i)
				}
			}
			got.active = slices.Sorted(maps.Keys(p.Active()))
			got.disclosedAll = p.DisclosedAll(plan)
			if p.Started() != (len(c.commits) > 0) {
				t.Fatalf("started %v with %d commitments", p.Started(), len(c.commits))
			}
			if got.committedBy != c.want.committedBy || got.byOtherThanA != c.want.byOtherThanA || got.full != c.want.full ||
				got.macroFull != c.want.macroFull || got.macroFullAlso != c.want.macroFullAlso ||
				!slices.Equal(got.unneededByA, c.want.unneededByA) || !slices.Equal(got.active, c.want.active) ||
				got.disclosedAll != c.want.disclosedAll {
				t.Fatalf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestCommittersSnapshotsStand: a Progress taken from Committers answers
// as the committers were when it was taken, whatever is set afterwards, in
// the MicroJob's bucket or another's, and agrees with one built from the
// whole map (NewProgress).
func TestCommittersSnapshotsStand(t *testing.T) {
	var ids []jobs.ID
	for i := range 40 {
		var id jobs.ID
		id[0], id[1] = byte(i%3), byte(i) // three buckets, many per bucket
		ids = append(ids, id)
	}
	type snap struct {
		p     Progress
		model map[jobs.ID][]string
	}
	var c Committers
	model := map[jobs.ID][]string{}
	var snaps []snap
	peers := []string{"a", "b", "c"}
	for step := range 300 {
		id := ids[(step*7)%len(ids)]
		by := peers[:step%4] // none (a removal), a, a b, a b c
		c.Set(id, slices.Clone(by))
		if len(by) == 0 {
			delete(model, id)
		} else {
			model[id] = slices.Clone(by)
		}
		if step%5 == 0 {
			snaps = append(snaps, snap{c.Progress(step), maps.Clone(model)})
		}
	}
	for i, s := range snaps {
		whole := NewProgress(s.model, i*5)
		for _, id := range ids {
			if got, want := s.p.CommittedBy(id), s.model[id]; !slices.Equal(got, want) || !slices.Equal(whole.CommittedBy(id), want) {
				t.Fatalf("snapshot %d, MicroJob %x: committers %v (from the map %v), want %v", i, id[:2], got, whole.CommittedBy(id), want)
			}
		}
		if s.p.Started() != (len(s.model) > 0) || !maps.Equal(s.p.Unneeded("c"), whole.Unneeded("c")) || !maps.Equal(s.p.Active(), whole.Active()) {
			t.Fatalf("snapshot %d: started %v, unneeded %v, active %v; from the map %v, %v", i, s.p.Started(), s.p.Unneeded("c"), s.p.Active(), whole.Unneeded("c"), whole.Active())
		}
	}
}
