package finish

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// TestLockerTimesOut: a processor with a took record in a MacroJob that
// never committed is a locker, assigned the task in the QoS replay, so it
// times out and is kicked; a MacroJob nobody committed to has no rounds.
func TestLockerTimesOut(t *testing.T) {
	var s RoundSeqs
	s.Took(0, "dead", 1)
	s.Took(0, "a", 2)
	s.Commit(0, "a", 3)
	s.Commit(0, "b", 4)
	s.Disclose(0, "a", 5)
	s.Disclose(0, "b", 6)
	s.Took(0, "dead", 7) // a later record of the same locker
	s.Took(5, "x", 8)    // no commitment in MacroJob 5
	got := s.Orders()
	if len(got) != 1 || !slices.Equal(got[0].Lockers, []string{"dead"}) || !slices.Equal(got[0].Commits, []string{"a", "b"}) {
		t.Fatalf("rounds %+v", got)
	}
	o := TaskOutcome(jobs.ID(sha256.Sum256([]byte("job"))), got[0])
	if !slices.Equal(o.Assigned, []string{"a", "b", "dead"}) || !slices.Equal(o.Commits, []string{"a", "b"}) {
		t.Fatalf("outcome %+v", o)
	}
	cfg := dispatch.DefaultConfig()
	l, err := dispatch.NewLedger(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range cfg.KickTimeouts {
		o.TaskID = fmt.Sprint("t", i)
		if _, err := l.Record(o); err != nil {
			t.Fatal(err)
		}
	}
	if k, ok := l.Kicked("dead"); !ok || k.Reason != dispatch.KickTimeouts {
		t.Fatalf("a locker that never committed is not kicked: %+v %v", k, ok)
	}
	if _, ok := l.Kicked("b"); ok {
		t.Fatal("a committer is kicked")
	}
}

// TestLockersBounded: committers keep their places; lockers fill what
// dispatch.MaxTaskProcessors leaves, earliest took record first.
func TestLockersBounded(t *testing.T) {
	var s RoundSeqs
	for i := range dispatch.MaxTaskProcessors - 2 {
		s.Commit(0, fmt.Sprintf("c%02d", i), uint64(100+i))
	}
	for i := range 5 {
		s.Took(0, fmt.Sprintf("l%d", i), uint64(50-i))
	}
	got := s.Orders()
	if !slices.Equal(got[0].Lockers, []string{"l4", "l3"}) {
		t.Fatalf("lockers %v", got[0].Lockers)
	}
	o := TaskOutcome(jobs.ID{}, got[0])
	if err := o.Validate(); err != nil || len(o.Assigned) != dispatch.MaxTaskProcessors {
		t.Fatalf("outcome of %d assigned: %v", len(o.Assigned), err)
	}
}

// TestMismatchLockers: a verdict whose lockers differ from those the
// records show, one named too many or one left out, is refused.
func TestMismatchLockers(t *testing.T) {
	own := records.VerdictRecord{Rounds: []records.RoundOrder{{Macro: 0, Commits: []string{"a"}, Lockers: []string{"c"}}}}
	for name, lockers := range map[string][]string{"framed": {"c", "d"}, "left out": nil, "other": {"d"}} {
		stored := own
		stored.Rounds = []records.RoundOrder{{Macro: 0, Commits: []string{"a"}, Lockers: lockers}}
		if m := Mismatch(stored, own); m != MismatchRounds {
			t.Errorf("%s: mismatch %q", name, m)
		}
		if d := MismatchDetail(stored, own); !strings.HasPrefix(d, "round 0: ") || !strings.Contains(d, "Lockers:[c]") {
			t.Errorf("%s: detail %q", name, d)
		}
	}
	// A round one record lacks is named too.
	longer := own
	longer.Rounds = append(slices.Clone(own.Rounds), records.RoundOrder{Macro: 1, Commits: []string{"b"}})
	if d := MismatchDetail(longer, own); !strings.HasPrefix(d, "round 1: ") {
		t.Errorf("a round more: detail %q", d)
	}
	if m, d := Mismatch(own, own), MismatchDetail(own, own); m != "" || d != "" {
		t.Fatalf("own record: mismatch %q, %q", m, d)
	}
}
