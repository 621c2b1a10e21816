package probe_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/p2p/p2ptest"
	"github.com/jobmesh/jobmesh/probe"
	"github.com/jobmesh/jobmesh/wasm"
)

func newPeer(t testing.TB) peer.ID { return p2ptest.NewPeerID(t) }

// TestModuleMatchesMix: the embedded module, run by the mesh's executor,
// answers what Mix computes, and differs for different inputs.
func TestModuleMatchesMix(t *testing.T) {
	ctx := context.Background()
	e, err := wasm.New(wasm.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	for _, p := range []string{"a", "b"} {
		in := probe.Input(3, p)
		out, err := e.Run(ctx, probe.Module(), in)
		if err != nil {
			t.Fatal(err)
		}
		if want := probe.Mix(in); !slices.Equal(out, want) {
			t.Fatalf("module %x, Mix %x", out, want)
		}
		if slices.Equal(out, in) {
			t.Fatal("module output equals its input")
		}
	}
	if probe.Expected(3, "a") == probe.Expected(3, "b") || probe.Expected(3, "a") == probe.Expected(4, "a") {
		t.Fatal("expected digests collide")
	}
}

// TestSchedule: windows and offsets are deterministic, inside the first
// half of the window, and spread over it.
func TestSchedule(t *testing.T) {
	cfg := probe.DefaultConfig()
	t0 := time.Unix(1_700_000_000, 0)
	w := cfg.WindowOf(t0)
	if !cfg.Start(w).After(t0.Add(-cfg.Window)) || cfg.Start(w).After(t0) || cfg.WindowOf(cfg.Start(w+1)) != w+1 {
		t.Fatalf("window %d starts at %v for %v", w, cfg.Start(w), t0)
	}
	var quarters [2]int
	for i := range 200 {
		p := string(rune('A'+i%26)) + string(rune('a'+i/26))
		off := cfg.Offset(w, p)
		if off != cfg.Offset(w, p) || off < 0 || off >= cfg.Window/2 {
			t.Fatalf("offset %v of %s not stable or outside the first half", off, p)
		}
		quarters[off*4/cfg.Window]++
	}
	if quarters[0] < 60 || quarters[1] < 60 {
		t.Fatalf("offsets not spread over the first half: %v", quarters)
	}
	if cfg.Offset(w, "p") == cfg.Offset(w+1, "p") {
		t.Fatal("offset does not change with the window")
	}
}

// TestGroup: the challenger first, then the two lowest-ranked others,
// whatever the candidates' order; fewer when fewer are connected.
func TestGroup(t *testing.T) {
	cands := []string{"d", "b", "p", "c", "a", "b"}
	g := probe.Group(9, "p", cands)
	if len(g) != probe.MaxGroup || g[0] != "p" {
		t.Fatalf("group %v", g)
	}
	rev := slices.Clone(cands)
	slices.Reverse(rev)
	if !slices.Equal(g, probe.Group(9, "p", rev)) {
		t.Fatal("group depends on the candidates' order")
	}
	if got := probe.Group(9, "p", []string{"p"}); !slices.Equal(got, []string{"p"}) {
		t.Fatalf("alone: %v", got)
	}
}

// fixture is one probe: a challenger, two members, the records they write.
type fixture struct {
	cfg     probe.Config
	w       uint64
	p, q, r peer.ID
	at      uint64 // challenge seq
	want    [32]byte
}

func newFixture(t *testing.T) *fixture {
	cfg := probe.DefaultConfig()
	f := &fixture{cfg: cfg, p: newPeer(t), q: newPeer(t), r: newPeer(t)}
	f.w = cfg.WindowOf(time.Unix(1_700_000_000, 0))
	f.at = uint64(cfg.ChallengeAt(f.w, f.p.String()).UnixNano())
	f.want = probe.Expected(f.w, f.p.String())
	return f
}

func (f *fixture) members() []string { return []string{f.p.String(), f.q.String(), f.r.String()} }

func (f *fixture) challenge(t *testing.T, members []string) crdt.Record {
	b, err := json.Marshal(probe.Challenge{Window: f.w, Members: members})
	if err != nil {
		t.Fatal(err)
	}
	return crdt.Record{Key: probe.ChallengeKey(f.w, f.p.String()), Type: probe.ChallengeType, Author: f.p, Seq: f.at, Payload: b}
}

func answer(t *testing.T, key, typ string, by peer.ID, seq uint64, h [32]byte) crdt.Record {
	b, err := json.Marshal(probe.NewAnswer(h))
	if err != nil {
		t.Fatal(err)
	}
	return crdt.Record{Key: key, Type: typ, Author: by, Seq: seq, Payload: b}
}

// answers: member m commits at +c ms and discloses at +d ms (d < 0: not
// at all), with the right output unless wrong.
func (f *fixture) answers(t *testing.T, m peer.ID, c, d int64, wrong bool) []crdt.Record {
	digest := f.want
	if wrong {
		digest[0] ^= 1
	}
	ms := uint64(time.Millisecond)
	out := []crdt.Record{answer(t, probe.CommitKey(f.w, f.p.String(), m.String()), probe.CommitType, m, f.at+uint64(c)*ms, probe.CommitHash(digest, m.String()))}
	if d >= 0 {
		out = append(out, answer(t, probe.ResultKey(f.w, f.p.String(), m.String()), probe.ResultType, m, f.at+uint64(d)*ms, digest))
	}
	return out
}

func all(string) bool { return true }

func (f *fixture) after() time.Time {
	return time.Unix(0, int64(f.at)).Add(f.cfg.Deadline + time.Second)
}

// TestOutcomeOrder: rounds by (seq, peer ID); Assigned are the committers.
func TestOutcomeOrder(t *testing.T) {
	f := newFixture(t)
	recs := slices.Concat(f.answers(t, f.q, 5, 6, false), f.answers(t, f.p, 10, 20, false), f.answers(t, f.r, 1, 30, false))
	var exp probe.Expectations
	task, err := f.cfg.Outcome(f.challenge(t, f.members()), recs, all, &exp, f.after())
	if err != nil {
		t.Fatal(err)
	}
	o := task.Outcome
	if want := []string{f.r.String(), f.q.String(), f.p.String()}; !slices.Equal(o.Commits, want) || !slices.Equal(o.Assigned, want) {
		t.Fatalf("commits %v assigned %v, want %v", o.Commits, o.Assigned, want)
	}
	if want := []string{f.q.String(), f.p.String(), f.r.String()}; !slices.Equal(o.Disclosures, want) {
		t.Fatalf("disclosures %v, want %v", o.Disclosures, want)
	}
	if o.TaskID != probe.TaskID(f.w, f.p.String()) || !task.End.Equal(time.Unix(0, int64(f.at)).Add(f.cfg.Deadline)) {
		t.Fatalf("task %s ends %v", o.TaskID, task.End)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestOutcomeCounts: wrong answers, late or early records and others'
// records do not count; a silent member never times out.
func TestOutcomeCounts(t *testing.T) {
	f := newFixture(t)
	late := int64(f.cfg.Deadline/time.Millisecond) + 1
	forged := answer(t, probe.CommitKey(f.w, f.p.String(), f.r.String()), probe.CommitType, f.q, f.at, probe.CommitHash(f.want, f.r.String()))
	copied := answer(t, probe.CommitKey(f.w, f.p.String(), f.r.String()), probe.CommitType, f.r, f.at, probe.CommitHash(f.want, f.q.String()))
	for _, tc := range []struct {
		name         string
		recs         []crdt.Record
		commits, dis int
	}{
		{"wrong output", f.answers(t, f.q, 1, 2, true), 0, 0},
		{"late result", f.answers(t, f.q, 1, late, false), 0, 0},
		{"late commit", f.answers(t, f.q, late, late, false), 0, 0},
		{"before the challenge", f.answers(t, f.q, -1, 2, false), 0, 0},
		{"result before commit", f.answers(t, f.q, 5, 2, false), 0, 0},
		{"no result", f.answers(t, f.q, 5, -1, false), 0, 0},
		{"one of two answers", slices.Concat(f.answers(t, f.q, 5, 6, false), f.answers(t, f.r, 1, -1, false)), 1, 1},
		{"forged author", []crdt.Record{forged}, 0, 0},
		{"copied commitment", []crdt.Record{copied}, 0, 0},
		{"silent member", nil, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task, err := f.cfg.Outcome(f.challenge(t, f.members()), tc.recs, all, nil, f.after())
			if err != nil {
				t.Fatal(err)
			}
			o := task.Outcome
			if len(o.Commits) != tc.commits || len(o.Disclosures) != tc.dis {
				t.Fatalf("commits %v disclosures %v, want %d and %d", o.Commits, o.Disclosures, tc.commits, tc.dis)
			}
			assertNoTimeout(t, o)
		})
	}
}

// assertNoTimeout: recording the probe adds no timeout for anyone.
func assertNoTimeout(t *testing.T, o dispatch.TaskOutcome) {
	t.Helper()
	if len(o.Assigned) == 0 {
		return // nobody answered: the replay skips it
	}
	l, err := dispatch.NewLedger(dispatch.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Record(o); err != nil {
		t.Fatal(err)
	}
	for _, id := range o.Assigned {
		if l.Timeouts(id) != 0 {
			t.Fatalf("%s timed out", id)
		}
	}
}

// TestOutcomeRefused: a challenge that breaks the rules is no probe, and a
// probe before its deadline is not due.
func TestOutcomeRefused(t *testing.T) {
	f := newFixture(t)
	good := f.challenge(t, f.members())
	backdated := good
	backdated.Seq = uint64(f.cfg.Start(f.w).Add(-time.Second).UnixNano())
	forged := good
	forged.Author = f.q
	for _, tc := range []struct {
		name string
		rec  crdt.Record
		adv  func(string) bool
	}{
		{"backdated into the last window", backdated, all},
		{"forged author", forged, all},
		{"challenger not first", f.challenge(t, []string{f.q.String(), f.p.String()}), all},
		{"four members", f.challenge(t, append(f.members(), newPeer(t).String())), all},
		{"member twice", f.challenge(t, []string{f.p.String(), f.q.String(), f.q.String()}), all},
		{"member never advertised", good, func(id string) bool { return id != f.r.String() }},
	} {
		if _, err := f.cfg.Outcome(tc.rec, nil, tc.adv, nil, f.after()); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if _, err := f.cfg.Outcome(good, nil, all, nil, time.Unix(0, int64(f.at))); err != probe.ErrNotDue {
		t.Fatalf("before the deadline: %v", err)
	}
}

// TestDecodeErrors: oversized and malformed payloads and keys are refused.
func TestDecodeErrors(t *testing.T) {
	big := make([]byte, probe.MaxChallenge+1)
	for _, b := range [][]byte{big, []byte(`{`), []byte(`{"window":1,"members":[]}`), []byte(`{"window":1,"members":["a"],"x":1}`)} {
		if _, err := probe.DecodeChallenge(b); err == nil {
			t.Errorf("challenge %.40q accepted", b)
		}
	}
	for _, b := range [][]byte{make([]byte, probe.MaxAnswer+1), []byte(`{"hash":"AB"}`), []byte(`{"hash":"00"}`)} {
		if _, err := probe.DecodeAnswer(b); err == nil {
			t.Errorf("answer %.40q accepted", b)
		}
	}
	for _, k := range []string{"/probes/1", "/probes/01/p", "/probes/1/p/commit", "/probes/1/p/other/q", "/jobs/1/p"} {
		if _, err := probe.ParseKey(k); err == nil {
			t.Errorf("key %q accepted", k)
		}
	}
	if err := (probe.Config{Window: time.Minute, Deadline: time.Hour, History: 1}).Validate(); err == nil {
		t.Error("deadline past half the window accepted")
	}
}

// BenchmarkModule is the cost of one probe answer on the mesh's executor.
func BenchmarkModule(b *testing.B) {
	ctx := context.Background()
	e, err := wasm.New(wasm.DefaultConfig(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(ctx)
	code, in := probe.Module(), probe.Input(1, "p")
	for b.Loop() {
		if _, err := e.Run(ctx, code, in); err != nil {
			b.Fatal(err)
		}
	}
}
