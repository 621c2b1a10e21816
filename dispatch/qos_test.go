package dispatch

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

func TestTaskScores(t *testing.T) {
	cfg := DefaultConfig() // round scores 10, 5, 2
	for _, tc := range []struct {
		name string
		o    TaskOutcome
		want []uint32
	}{
		{"in order", TaskOutcome{TaskID: "t", Assigned: []string{"a", "b", "c"}, Commits: []string{"a", "b", "c"}, Disclosures: []string{"a", "b", "c"}}, []uint32{20, 10, 4}},
		{"mixed order", TaskOutcome{TaskID: "t", Assigned: []string{"a", "b", "c"}, Commits: []string{"c", "a", "b"}, Disclosures: []string{"a", "b", "c"}}, []uint32{15, 7, 12}},
		{"one timed out", TaskOutcome{TaskID: "t", Assigned: []string{"a", "b", "c"}, Commits: []string{"b", "c"}, Disclosures: []string{"c", "b"}}, []uint32{0, 15, 15}},
		{"committed, never disclosed", TaskOutcome{TaskID: "t", Assigned: []string{"a", "b"}, Commits: []string{"a", "b"}, Disclosures: []string{"b"}}, []uint32{10, 15}},
		{"single processor", TaskOutcome{TaskID: "t", Assigned: []string{"a"}, Commits: []string{"a"}, Disclosures: []string{"a"}}, []uint32{20}},
		{"fourth place scores nothing", TaskOutcome{TaskID: "t", Assigned: []string{"a", "b", "c", "d"}, Commits: []string{"a", "b", "c", "d"}, Disclosures: []string{"a", "b", "c", "d"}}, []uint32{20, 10, 4, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := TaskScores(cfg, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("scores %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTaskOutcomeValidate(t *testing.T) {
	for name, o := range map[string]TaskOutcome{
		"no id":                 {Assigned: []string{"a"}},
		"nobody assigned":       {TaskID: "t"},
		"assigned twice":        {TaskID: "t", Assigned: []string{"a", "a"}},
		"stranger commits":      {TaskID: "t", Assigned: []string{"a"}, Commits: []string{"x"}},
		"commits twice":         {TaskID: "t", Assigned: []string{"a"}, Commits: []string{"a", "a"}},
		"discloses uncommitted": {TaskID: "t", Assigned: []string{"a", "b"}, Commits: []string{"a"}, Disclosures: []string{"b"}},
	} {
		if err := o.Validate(); !errors.Is(err, ErrBadOutcome) {
			t.Errorf("%s: got %v", name, err)
		}
	}
}

func TestQoSScores(t *testing.T) {
	cfg := DefaultConfig() // weights B 2, R 1, P 1; O_min 60 s
	got, err := QoSScores(cfg, []QoSInput{
		{ID: "fast", VRAM: 24576, Timeout: 60 * time.Second, Speed: 20},
		{ID: "slow", VRAM: 8192, Timeout: 180 * time.Second, Speed: 5},
		{ID: "mid", VRAM: 12288, Timeout: 120 * time.Second, Speed: 10},
		{ID: "under", VRAM: 0, Timeout: 10 * time.Second, Speed: 0},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []QoSScore{
		{ID: "fast", R: 1, P: 1, B: 1, Q: 1},
		{ID: "slow", R: 1.0 / 3, P: 0, B: 0.25, Q: (2*0.25 + 1.0/3) / 4},
		{ID: "mid", R: 0.5, P: 0.5, B: 0.5, Q: 0.5},
		{ID: "under", R: 0, P: 1, B: 0, Q: 0.25},
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ID != w.ID || math.Abs(g.R-w.R) > 1e-12 || math.Abs(g.P-w.P) > 1e-12 || math.Abs(g.B-w.B) > 1e-12 || math.Abs(g.Q-w.Q) > 1e-12 {
			t.Errorf("%d: got %+v, want %+v", i, g, w)
		}
	}
	// Everyone at the same timeout: P = 1 (no spread to normalise).
	same, _ := QoSScores(cfg, []QoSInput{{ID: "a", Timeout: time.Minute}, {ID: "b", Timeout: time.Minute}})
	if same[0].P != 1 || same[1].P != 1 || same[0].B != 0 || same[0].R != 0 {
		t.Fatalf("degenerate inputs: %+v", same)
	}
	if _, err := QoSScores(cfg, []QoSInput{{ID: "x", Speed: math.NaN()}}); !errors.Is(err, ErrInvalidNode) {
		t.Fatalf("NaN speed: %v", err)
	}
}

func outcome(id string, assigned []string, order ...string) TaskOutcome {
	return TaskOutcome{TaskID: id, Assigned: assigned, Commits: order, Disclosures: order}
}

func TestNodeScoreWindow(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ScoreWindow = 3
	l, _ := NewLedger(cfg)
	if l.NodeScore("a") != 10 {
		t.Fatalf("new node score %v", l.NodeScore("a"))
	}
	trio := []string{"a", "b", "c"}
	for i, order := range [][]string{{"a", "b", "c"}, {"b", "a", "c"}, {"c", "b", "a"}, {"a", "c", "b"}} {
		if _, err := l.Record(outcome(fmt.Sprint(i), trio, order...)); err != nil {
			t.Fatal(err)
		}
	}
	// a's last three task scores: 10, 4, 20 (the first 20 slid out).
	if got := l.NodeScore("a"); math.Abs(got-34.0/3) > 1e-12 {
		t.Fatalf("node score %v", got)
	}
	// A task nobody submitted to is ignored for the score (seed 003).
	if _, err := l.Record(TaskOutcome{TaskID: "dead", Assigned: trio}); err != nil {
		t.Fatal(err)
	}
	if got := l.NodeScore("a"); math.Abs(got-34.0/3) > 1e-12 {
		t.Fatalf("unscored task changed the score: %v", got)
	}
}

// TestKickOutAfterRepeatedTimeouts: 2 timeouts in the last 3 tasks kick the
// processor out (Crynux relay rule), once, with the triggering task named.
func TestKickOutAfterRepeatedTimeouts(t *testing.T) {
	l, _ := NewLedger(DefaultConfig())
	pair := []string{"good", "flaky"}
	steps := []struct {
		o    TaskOutcome
		kick []string
	}{
		{outcome("t1", pair, "good", "flaky"), nil},
		{outcome("t2", pair, "good"), nil}, // flaky times out: 1 of 3
		{outcome("t3", pair, "good", "flaky"), nil},
		{outcome("t4", pair, "good"), []string{"flaky"}}, // 2 of the last 3
		{outcome("t5", pair, "good"), nil},               // already out: no second report
	}
	for _, s := range steps {
		kicks, err := l.Record(s.o)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, k := range kicks {
			got = append(got, k.Node)
			if k.Reason != KickTimeouts || k.TaskID != "t4" {
				t.Fatalf("kick %+v", k)
			}
		}
		if !slices.Equal(got, s.kick) {
			t.Fatalf("%s: kicked %v, want %v", s.o.TaskID, got, s.kick)
		}
	}
	if k, ok := l.Kicked("flaky"); !ok || k.Reason != KickTimeouts {
		t.Fatalf("flaky: %+v %v", k, ok)
	}
	if _, ok := l.Kicked("good"); ok {
		t.Fatal("good kicked")
	}
	// A processor that submitted nothing to a task others submitted to
	// times out; twice in three tasks kicks it.
	l2, _ := NewLedger(DefaultConfig())
	for i := range 2 {
		kicks, _ := l2.Record(outcome(fmt.Sprint(i), pair, "good"))
		if (i == 1) != (len(kicks) == 1) {
			t.Fatalf("task %d: kicks %v", i, kicks)
		}
	}
}

// TestUnsubmittedTaskIgnored: a task nobody submitted to changes nobody's
// timeout count (seed 003: it "is simply ignored"), however often it comes.
func TestUnsubmittedTaskIgnored(t *testing.T) {
	l, _ := NewLedger(DefaultConfig())
	pair := []string{"a", "b"}
	if _, err := l.Record(outcome("t0", pair, "a")); err != nil { // b: 1 timeout
		t.Fatal(err)
	}
	for i := range 5 {
		kicks, err := l.Record(TaskOutcome{TaskID: fmt.Sprint("dead", i), Assigned: pair})
		if err != nil || len(kicks) != 0 {
			t.Fatalf("dead task %d: kicks %v, %v", i, kicks, err)
		}
	}
	for _, id := range pair {
		if k, ok := l.Kicked(id); ok {
			t.Fatalf("%s kicked by tasks nobody submitted to: %+v", id, k)
		}
	}
	// b's one timeout is still in the window: one more kicks it.
	if kicks, _ := l.Record(outcome("t1", pair, "a")); len(kicks) != 1 || kicks[0].Node != "b" {
		t.Fatalf("kicks %v, want b", kicks)
	}
}

// TestNoKickOutAfterRecovery: timeouts spread out, and a low-score spell that
// ends before the streak limit, do not kick a processor out.
func TestNoKickOutAfterRecovery(t *testing.T) {
	cfg := DefaultConfig()
	cfg.KickScoreWindow = 2
	l, _ := NewLedger(cfg)
	trio := []string{"a", "b", "c"}
	seq := []TaskOutcome{
		outcome("1", trio, "a", "b"),      // c times out
		outcome("2", trio, "a", "b", "c"), // recovered
		outcome("3", trio, "a", "b", "c"),
		outcome("4", trio, "a", "b"), // c times out again, 1 of the last 3
		outcome("5", trio, "a", "b", "c"),
		outcome("6", trio, "a", "b", "c"),
	}
	for _, o := range seq {
		kicks, err := l.Record(o)
		if err != nil {
			t.Fatal(err)
		}
		if len(kicks) != 0 {
			t.Fatalf("task %s kicked %v", o.TaskID, kicks)
		}
	}
	for _, id := range trio {
		if _, ok := l.Kicked(id); ok {
			t.Fatalf("%s kicked", id)
		}
	}
}

func TestKickOutLowScoreStreak(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RoundScores = []uint32{10, 5, 2, 1}
	cfg.KickScoreThreshold = 3
	cfg.KickScoreWindow = 2
	cfg.KickTimeouts, cfg.KickTimeoutWindow = 3, 3
	l, _ := NewLedger(cfg)
	four := []string{"a", "b", "c", "d"}
	// d is fourth in both rounds: 2 points a task, below 3.
	slow := func(id string) TaskOutcome { return outcome(id, four, "a", "b", "c", "d") }
	fast := func(id string) TaskOutcome { return outcome(id, four, "d", "a", "b", "c") }
	for _, step := range []struct {
		o      TaskOutcome
		kicked bool
	}{
		{slow("1"), false}, {slow("2"), false}, // streak 2
		{fast("3"), false},                     // mean (2+20)/2 recovers: streak 0
		{slow("4"), false},                     // mean (20+2)/2 still fine
		{slow("5"), false}, {slow("6"), false}, // streak 2
		{slow("7"), true}, // streak 3: out
	} {
		kicks, err := l.Record(step.o)
		if err != nil {
			t.Fatal(err)
		}
		got := len(kicks) == 1 && kicks[0].Node == "d" && kicks[0].Reason == KickLowScore
		if got != step.kicked || (len(kicks) > 1) {
			t.Fatalf("task %s: kicks %+v", step.o.TaskID, kicks)
		}
	}
}

func TestLedgerRejectsBadOutcomeUnchanged(t *testing.T) {
	l, _ := NewLedger(DefaultConfig())
	_, _ = l.Record(outcome("1", []string{"a"}, "a"))
	before := l.NodeScore("a")
	if _, err := l.Record(TaskOutcome{TaskID: "2", Assigned: []string{"a"}, Disclosures: []string{"a"}}); !errors.Is(err, ErrBadOutcome) {
		t.Fatalf("got %v", err)
	}
	if l.NodeScore("a") != before || len(l.nodes["a"].timeouts) != 1 {
		t.Fatal("a rejected outcome changed the ledger")
	}
}

// FuzzTaskOutcome feeds arbitrary round lists: Validate either rejects them
// or TaskScores and the Ledger accept them, and scores never exceed the best
// task score.
func FuzzTaskOutcome(f *testing.F) {
	f.Add([]byte("abc"), []byte("cab"), []byte("ca"))
	f.Add([]byte("a"), []byte(""), []byte("a"))
	f.Add([]byte("aa"), []byte("a"), []byte("a"))
	cfg := DefaultConfig()
	f.Fuzz(func(t *testing.T, assigned, commits, disclosures []byte) {
		split := func(b []byte) []string {
			var out []string
			for _, c := range b {
				out = append(out, string(rune('a'+c%8)))
			}
			return out
		}
		o := TaskOutcome{TaskID: "t", Assigned: split(assigned), Commits: split(commits), Disclosures: split(disclosures)}
		scores, err := TaskScores(cfg, o)
		if err != nil {
			if !errors.Is(err, ErrBadOutcome) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		for _, s := range scores {
			if s > cfg.maxTaskScore() {
				t.Fatalf("score %d above %d", s, cfg.maxTaskScore())
			}
		}
		l, _ := NewLedger(cfg)
		if _, err := l.Record(o); err != nil {
			t.Fatal(err)
		}
	})
}

func TestLedgerQoSScores(t *testing.T) {
	l, _ := NewLedger(DefaultConfig())
	trio := []string{"a", "b", "c"}
	for i := range 3 {
		if _, err := l.Record(outcome(fmt.Sprint(i), trio, "a", "b", "c")); err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.QoSScores([]QoSInput{
		{ID: "a", VRAM: 8, Timeout: time.Minute},
		{ID: "c", VRAM: 8, Timeout: time.Minute},
		{ID: "new", VRAM: 8, Timeout: time.Minute},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Node scores 20, 4 and the new-node default 10, normalised by 20.
	for i, want := range []float64{1, 0.2, 0.5} {
		if got[i].B != want {
			t.Fatalf("%s: B = %v, want %v", got[i].ID, got[i].B, want)
		}
	}
}

// TestRejoinThenNormalTask: a kicked processor that rejoins and completes
// one normal task is back, and its old timeouts do not kick it again.
func TestRejoinThenNormalTask(t *testing.T) {
	l, _ := NewLedger(DefaultConfig())
	pair := []string{"a", "b"}
	for i := range 2 {
		if _, err := l.Record(outcome(fmt.Sprint("late", i), pair, "a")); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := l.Kicked("b"); !ok {
		t.Fatal("b not kicked after two timeouts")
	}
	l.Rejoin("b")
	if kicks, _ := l.Record(outcome("normal", pair, "a", "b")); len(kicks) != 0 {
		t.Fatalf("kicks %v", kicks)
	}
	if _, ok := l.Kicked("b"); ok {
		t.Fatal("b still kicked after rejoining and a normal task")
	}
	if kicks, _ := l.Record(outcome("late2", pair, "a")); len(kicks) != 0 {
		t.Fatalf("one timeout after rejoining kicked %v", kicks)
	}
}

// TestLedgerTimeouts: Timeouts counts the timeouts among a processor's
// last KickTimeoutWindow tasks, the count the kick rule reads; older ones
// leave the window and a rejoin forgets them.
func TestLedgerTimeouts(t *testing.T) {
	cfg := DefaultConfig() // 2 timeouts of the last 3 kick
	l, _ := NewLedger(cfg)
	trio := []string{"a", "b", "c"}
	for i, subs := range [][]string{{"a", "b"}, {"a", "b", "c"}, {"a", "b", "c"}, {"a", "b", "c"}} {
		if _, err := l.Record(outcome(fmt.Sprint(i), trio, subs...)); err != nil {
			t.Fatal(err)
		}
		want := 0
		if i < cfg.KickTimeoutWindow {
			want = 1
		}
		if got := l.Timeouts("c"); got != want || l.Timeouts("a") != 0 {
			t.Fatalf("after task %d: c %d timeouts, want %d; a %d", i, got, want, l.Timeouts("a"))
		}
	}
	_, _ = l.Record(outcome("4", trio, "a"))
	if got := l.Timeouts("b"); got != 1 {
		t.Fatalf("b: %d timeouts, want 1", got)
	}
	l.Rejoin("b")
	if got := l.Timeouts("b"); got != 0 || l.Timeouts("nobody") != 0 {
		t.Fatalf("rejoined b: %d timeouts", got)
	}
}
