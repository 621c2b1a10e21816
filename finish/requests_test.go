package finish

import (
	"bytes"
	"crypto/sha256"
	"slices"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// TestRedoSilent: a silent MicroJob is redone once its committers have
// been silent for the grace, timed per MicroJob from when it was first
// found silent or its committers last wrote, with the longer grace while
// a committer is connected, and at most the longer grace after it was
// first found silent whatever its committers write; one with a redo
// record is not redone again.
func TestRedoSilent(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	cases := []struct {
		name      string
		silent    map[string][]string
		since     map[string]time.Time
		heard     map[string]time.Time
		connected map[string]bool
		redo      map[string]records.Redo
		now       time.Duration
		want      []string
		wait      bool
	}{
		{name: "first found silent: not due", silent: map[string][]string{"a": {"p"}}, now: 0, wait: true},
		{name: "silent for the grace", silent: map[string][]string{"a": {"p"}}, since: map[string]time.Time{"a": t0}, now: time.Minute, want: []string{"a"}},
		{name: "each MicroJob timed on its own", silent: map[string][]string{"a": {"p"}, "b": {"p"}},
			since: map[string]time.Time{"a": t0}, now: time.Minute, want: []string{"a"}, wait: true},
		{name: "a committer still writing", silent: map[string][]string{"a": {"p"}}, since: map[string]time.Time{"a": t0},
			heard: map[string]time.Time{"p": at(50 * time.Second)}, now: 109 * time.Second, wait: true},
		{name: "a grace after the last write", silent: map[string][]string{"a": {"p"}}, since: map[string]time.Time{"a": t0},
			heard: map[string]time.Time{"p": at(50 * time.Second)}, now: 110 * time.Second, want: []string{"a"}},
		{name: "a connected committer", silent: map[string][]string{"a": {"p", "q"}}, since: map[string]time.Time{"a": t0},
			connected: map[string]bool{"q": true}, now: 9 * time.Minute, wait: true},
		{name: "a connected committer, ten graces on", silent: map[string][]string{"a": {"p", "q"}}, since: map[string]time.Time{"a": t0},
			connected: map[string]bool{"q": true}, now: 10 * time.Minute, want: []string{"a"}},
		{name: "a committer writing on, the longest grace after it was found silent", silent: map[string][]string{"a": {"p"}},
			since: map[string]time.Time{"a": t0}, heard: map[string]time.Time{"p": at(9*time.Minute + 59*time.Second)}, now: 10 * time.Minute, want: []string{"a"}},
		{name: "redo written already", silent: map[string][]string{"a": {"p"}, "b": {"p"}},
			since: map[string]time.Time{"a": t0, "b": t0}, redo: map[string]records.Redo{"a": {Micro: "a"}}, now: time.Minute, want: []string{"b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := RedoSilent(Silence{Silent: c.silent, Since: c.since, Heard: c.heard, Connected: c.connected,
				Grace: time.Minute, ConnectedGrace: 10 * time.Minute, Redo: c.redo, Now: at(c.now)})
			var got []string
			for _, rd := range s.Redos {
				if !slices.Equal(rd.Exclude, c.silent[rd.Micro]) {
					t.Fatalf("redo of %s excludes %v, want its committers %v", rd.Micro, rd.Exclude, c.silent[rd.Micro])
				}
				got = append(got, rd.Micro)
			}
			if !slices.Equal(got, c.want) || s.Wait != c.wait {
				t.Fatalf("redone %v, wait %v; want %v, wait %v", got, s.Wait, c.want, c.wait)
			}
			if len(s.Since) != len(c.silent) {
				t.Fatalf("kept %d silence times for %d silent MicroJobs", len(s.Since), len(c.silent))
			}
			for m := range c.silent {
				if want, ok := c.since[m]; ok && !s.Since[m].Equal(want) || !ok && !s.Since[m].Equal(at(c.now)) {
					t.Fatalf("%s silent since %v", m, s.Since[m])
				}
			}
		})
	}
}

// TestRedoRank: the processors that may redo a MicroJob rank by their
// rendezvous hash; excluded ones and those that miss the requirements
// take no place.
func TestRedoRank(t *testing.T) {
	id := jobs.ID(sha256.Sum256([]byte("job")))
	rd := records.Redo{Micro: "m", Exclude: []string{"silent"}}
	nodes := []dispatch.Node{{ID: "p1", CardModel: "a100", VRAM: 80}, {ID: "p2", CardModel: "a100", VRAM: 80},
		{ID: "p3", CardModel: "a100", VRAM: 80}, {ID: "silent", CardModel: "a100", VRAM: 80},
		{ID: "small", CardModel: "a100", VRAM: 8}, {ID: "other", CardModel: "h100", VRAM: 80}}
	eligible := []string{"p1", "p2", "p3"}
	slices.SortFunc(eligible, func(a, b string) int {
		ha, hb := redoHash(a, id, rd), redoHash(b, id, rd)
		return bytes.Compare(hb[:], ha[:])
	})
	req := jobs.Requirements{GPUModel: "a100", MinVRAMMiB: 16}
	for want, p := range eligible {
		if got := RedoRank(p, id, rd, req, nodes); got != want {
			t.Fatalf("%s ranks %d, want %d", p, got, want)
		}
	}
	// Without requirements every processor but the excluded one ranks.
	mine := redoHash(eligible[2], id, rd)
	want := 0
	for _, p := range []string{"p1", "p2", "p3", "small", "other"} {
		if h := redoHash(p, id, rd); bytes.Compare(h[:], mine[:]) > 0 {
			want++
		}
	}
	if got := RedoRank(eligible[2], id, rd, jobs.Requirements{}, nodes); got != want {
		t.Fatalf("without requirements: rank %d, want %d", got, want)
	}
}

// TestPassDue: a pass over the requests is due when they changed, a
// period after the last pass, or while their version is unknown.
func TestPassDue(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	cases := []struct {
		ver, last uint64
		after     time.Duration
		want      bool
	}{
		{ver: 3, last: 3, after: time.Second, want: false},
		{ver: 4, last: 3, after: time.Second, want: true},
		{ver: 3, last: 3, after: 2 * time.Second, want: true},
		{ver: 0, last: 0, after: 0, want: true},
	}
	for _, c := range cases {
		if got := PassDue(c.ver, c.last, t0, t0.Add(c.after), 2*time.Second); got != c.want {
			t.Errorf("version %d after %d, %s on: due %v, want %v", c.ver, c.last, c.after, got, c.want)
		}
	}
}
