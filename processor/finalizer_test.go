package processor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobindex"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
	"github.com/jobmesh/jobmesh/meshview"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// TestDesignatedFinalizer: every order of the same disclosures names the
// same finalizer, a culprit is never named, each discloser is named for
// some jobs, and nobody is named without disclosures.
func TestDesignatedFinalizer(t *testing.T) {
	procs := []string{"peerA", "peerB", "peerC", "peerD"}
	named := map[string]int{}
	rng := rand.New(rand.NewPCG(1, 2))
	for j := range 200 {
		id := jobs.ID(sha256.Sum256([]byte(fmt.Sprint("job", j))))
		recs := finish.NewRecords()
		for i, p := range procs {
			recs.Discl = append(recs.Discl, microjob.Disclosure{Processor: p, MicroID: jobs.ID{byte(i)}})
		}
		want := finish.Designated(id, recs, nil)
		if !slices.Contains(procs, want) {
			t.Fatalf("job %d: named %q", j, want)
		}
		named[want]++
		for range 5 {
			rng.Shuffle(len(recs.Discl), func(a, b int) { recs.Discl[a], recs.Discl[b] = recs.Discl[b], recs.Discl[a] })
			if got := finish.Designated(id, recs, nil); got != want {
				t.Fatalf("job %d: %q in one order, %q in another", j, want, got)
			}
		}
		if got := finish.Designated(id, recs, []string{want}); got == want || got == "" {
			t.Fatalf("job %d: culprit %q named, or nobody: %q", j, want, got)
		}
	}
	for _, p := range procs {
		if named[p] == 0 {
			t.Errorf("%s never named in 200 jobs: %v", p, named)
		}
	}
	if got := finish.Designated(jobs.ID{}, finish.NewRecords(), nil); got != "" {
		t.Errorf("named %q without disclosures", got)
	}
}

// TestAvoidSelfCheck: a room's Avoid rule keeps a processor from taking a
// verifier beside a regular MicroJob it checks (held or already run), in
// either order, and lets everything else through.
func TestAvoidSelfCheck(t *testing.T) {
	plan := roundsPlan(t)
	m := plan.Macros[0]
	var verifier jobs.ID
	var checked, unchecked []jobs.ID
	for _, mu := range m.Micros {
		if mu.Verifier {
			verifier = mu.ID
		}
	}
	for _, mu := range m.Micros {
		if !mu.Verifier {
			if meshview.VerifierChecks(plan, verifier, mu.ID) {
				checked = append(checked, mu.ID)
			} else {
				unchecked = append(unchecked, mu.ID)
			}
		}
	}
	if len(checked) == 0 {
		t.Fatal("the verifier checks no regular MicroJob")
	}
	w := &Worker{}
	js := (&jobState{}).withPlan(plan)
	avoid := w.avoidSelfCheck(js)
	id := func(h jobs.ID) macrojob.ID { return macrojob.ID(h.String()) }
	if !avoid(id(verifier), []macrojob.ID{id(checked[0])}) || !avoid(id(checked[0]), []macrojob.ID{id(verifier)}) {
		t.Fatal("a verifier beside a regular MicroJob it checks is not avoided")
	}
	if avoid(id(verifier), nil) || avoid(id(checked[0]), nil) {
		t.Fatal("avoided with nothing taken")
	}
	for _, u := range unchecked {
		if avoid(id(verifier), []macrojob.ID{id(u)}) {
			t.Fatal("avoided beside a regular MicroJob the verifier does not check")
		}
	}
	js.mine = map[jobs.ID]bool{checked[0]: true}
	if !avoid(id(verifier), nil) {
		t.Fatal("a verifier is not avoided after running a regular MicroJob it checks")
	}
	if avoid(macrojob.ID("not-a-hash#1"), nil) {
		t.Fatal("an item that names no MicroJob is avoided")
	}
}

// silentFixture is a worker with a one-replica store, DiscloseGrace a
// minute, and a job whose first MacroJob processor "p" fully committed
// without disclosing anything.
func silentFixture(t *testing.T) (*Worker, *jobState, *finish.Records, *crdt.Store) {
	plan := roundsPlan(t)
	c := crdttest.New(t, crdttest.Options{Replicas: 1})
	store := c.Replicas[0].Store
	x := jobindex.New(store)
	w := &Worker{cfg: Config{DiscloseGrace: time.Minute}, self: store.Self().String(), writer: x.Writer(), index: x, log: slog.New(slog.DiscardHandler)}
	js := (&jobState{info: &jobs.JobInfo{Requirements: jobs.Requirements{Replicas: 1}}}).withPlan(plan)
	recs := finish.NewRecords()
	for _, mu := range plan.Macros[0].Micros {
		recs.Commits = append(recs.Commits, microjob.Commitment{JobID: plan.JobID, MicroID: mu.ID, Processor: "p"})
	}
	return w, js, recs, store
}

// TestRedoSilentTimesEachMicroJob: a MicroJob is redone only after it has
// been silent (fully committed MacroJob, no disclosure) for DiscloseGrace
// itself; another MicroJob silent for long does not make a newly silent
// one due at once.
func TestRedoSilentTimesEachMicroJob(t *testing.T) {
	w, js, recs, store := silentFixture(t)
	plan := js.plan()
	a, b := plan.Macros[0].Micros[0].ID.String(), plan.Macros[0].Micros[1].ID.String()
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0)
	redone := func(m string) bool {
		_, err := store.Get(ctx, records.RedoKey(plan.JobID, mustHash(m), w.self))
		return err == nil
	}
	if err := w.redoSilent(ctx, js, recs, microjob.Verdict{Missing: []string{a}}, t0); err != nil {
		t.Fatal(err)
	}
	if redone(a) {
		t.Fatal("redone before its grace")
	}
	// A minute on: a has been silent for the grace, b only just now.
	if err := w.redoSilent(ctx, js, recs, microjob.Verdict{Missing: []string{a, b}}, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if !redone(a) {
		t.Fatal("a MicroJob silent for the grace was not redone")
	}
	if redone(b) {
		t.Fatal("a MicroJob silent only since now was redone at once")
	}
	if err := w.redoSilent(ctx, js, recs, microjob.Verdict{Missing: []string{a, b}}, t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if !redone(b) {
		t.Fatal("b was not redone after its own grace")
	}
}

// TestRedoTurnRanksProcessors: of the live processors that may redo a
// MicroJob, the first by rendezvous hash redoes it at once and the k-th
// only once the redo has waited k processing timeouts; excluded and
// kicked-out processors take no place in the ranking.
func TestRedoTurnRanksProcessors(t *testing.T) {
	plan := roundsPlan(t)
	js := (&jobState{info: &jobs.JobInfo{Requirements: jobs.Requirements{Replicas: 1}}}).withPlan(plan)
	rd := records.Redo{Micro: plan.Macros[0].Micros[0].ID.String(), Exclude: []string{"silent"}}
	ids := []string{"p1", "p2", "p3", "silent", "kicked"}
	v := &meshview.View{}
	for _, id := range ids {
		pv := meshview.ProcessorView{Node: dispatch.Node{ID: id, CardModel: "cpu"}}
		if id == "kicked" {
			pv.Kick = &dispatch.Kick{}
		}
		v.Processors = append(v.Processors, pv)
	}
	// The expected order: p1..p3 by descending hash.
	ranked := []string{"p1", "p2", "p3"}
	slices.SortFunc(ranked, func(a, b string) int {
		ha, hb := records.RankHash(a, plan.JobID.String(), rd.Micro, "redo"), records.RankHash(b, plan.JobID.String(), rd.Micro, "redo")
		return -bytes.Compare(ha[:], hb[:])
	})
	const timeout = time.Minute
	for rank, self := range ranked {
		w := &Worker{self: self, cfg: Config{Room: macrojob.RoomConfig{Queue: macrojob.Config{ProcessingTimeout: timeout}}}}
		w.dview.Store(v)
		js.redoSeen, js.redoView = nil, nil // each worker keeps its own job state
		if got := w.redoTurn(js, rd); got != (rank == 0) {
			t.Fatalf("rank %d (%s): turn at once = %v", rank, self, got)
		}
		if rank == 0 {
			continue
		}
		js.redoSeen[rd.Micro] = time.Now().Add(-time.Duration(rank)*timeout + time.Second)
		if w.redoTurn(js, rd) {
			t.Fatalf("rank %d: turn before %d timeouts", rank, rank)
		}
		js.redoSeen[rd.Micro] = time.Now().Add(-time.Duration(rank) * timeout)
		if !w.redoTurn(js, rd) {
			t.Fatalf("rank %d: no turn after %d timeouts", rank, rank)
		}
	}
}

// TestFinalizerStandby: the designated finalizer never stands by; the
// k-th in rank stands by for k × FinalizeTakeover after the job is
// complete, then only while a processor ranked above it was heard
// finishing the job within FinalizeTakeover, and never after
// finalizeLimit; one without a disclosure never takes over.
func TestFinalizerStandby(t *testing.T) {
	cfg := Config{Poll: time.Second, RerunTimeout: time.Minute}
	takeover := cfg.finalizeTakeover()
	order := []string{"a", "b", "c", "d"}
	t0 := time.Unix(1_800_000_000, 0)
	at := func(waited time.Duration) time.Time { return t0.Add(waited) }
	w := &Worker{cfg: cfg, self: "c"}
	js := &jobState{}
	if _, ok := (&Worker{cfg: cfg, self: "a"}).standby(js, order, 0, t0); ok {
		t.Fatal("the designated finalizer stands by")
	}
	if until, ok := w.standby(js, order, takeover, at(takeover)); !ok || !until.Equal(at(2*takeover)) {
		t.Fatalf("rank 2 after one takeover: until %v, %v; want %v", until, ok, at(2*takeover))
	}
	if _, ok := w.standby(js, order, 2*takeover, at(2*takeover)); ok {
		t.Fatal("rank 2 stands by after its turn with nobody heard finishing the job")
	}
	// Heard from a processor ranked below: no reason to wait.
	js.hints.Finalizing("d", at(2*takeover))
	if _, ok := w.standby(js, order, 2*takeover, at(2*takeover)); ok {
		t.Fatal("stood by for a processor ranked below")
	}
	// Heard from the designated finalizer: wait until a takeover after.
	heardAt := at(3 * takeover)
	js.hints.Finalizing("a", heardAt)
	if until, ok := w.standby(js, order, 3*takeover+takeover/2, heardAt.Add(takeover/2)); !ok || !until.Equal(heardAt.Add(takeover)) {
		t.Fatalf("heard the finalizer: until %v, %v; want %v", until, ok, heardAt.Add(takeover))
	}
	if _, ok := w.standby(js, order, 4*takeover, heardAt.Add(takeover)); ok {
		t.Fatal("stood by for a finalizer not heard for a whole takeover")
	}
	// A finalizer that keeps talking is waited for only so long.
	limit := cfg.finalizeLimit()
	js.hints.Finalizing("a", at(limit))
	if _, ok := w.standby(js, order, limit, at(limit)); ok {
		t.Fatal("stood by beyond finalizeLimit")
	}
	// Without a disclosure of its own a processor never takes over: its
	// verdict would not count.
	x := &Worker{cfg: cfg, self: "x"}
	for _, waited := range []time.Duration{3 * takeover, 4 * takeover, 2 * limit} {
		if _, ok := x.standby(&jobState{}, order, waited, at(waited)); !ok {
			t.Fatalf("a processor without a disclosure took over after %v", waited)
		}
	}
}

// TestFinalizerOrder: the order names each non-culprit discloser once,
// starting with the designated finalizer.
func TestFinalizerOrder(t *testing.T) {
	id := jobs.ID(sha256.Sum256([]byte("job")))
	recs := finish.NewRecords()
	for i, p := range []string{"a", "b", "a", "c", "b", "d"} {
		recs.Discl = append(recs.Discl, microjob.Disclosure{Processor: p, MicroID: jobs.ID{byte(i)}})
	}
	order := finish.FinalizerOrder(id, recs, []string{"c"})
	if len(order) != 3 || slices.Contains(order, "c") || order[0] != finish.Designated(id, recs, []string{"c"}) {
		t.Fatalf("order %v", order)
	}
	for i := 1; i < len(order); i++ {
		a, b := records.RankHash(order[i-1], id.String(), "finalizer"), records.RankHash(order[i], id.String(), "finalizer")
		if bytes.Compare(a[:], b[:]) <= 0 {
			t.Fatalf("order %v is not by descending hash", order)
		}
	}
}

// TestJobLevelKey: the periodic sync reads a job's own records and those
// directly under it, not its MicroJobs', requests' or verdicts' records
// (a verdict finishes a job only once judged: finalize).
func TestJobLevelKey(t *testing.T) {
	id := jobs.ID(sha256.Sum256([]byte("job")))
	for _, k := range []string{records.JobKey(id), records.AbortedKey(id)} {
		if !jobLevelKey(k) {
			t.Errorf("%s left out", k)
		}
	}
	mid := jobs.ID(sha256.Sum256([]byte("micro")))
	for _, k := range []string{records.VerdictKey(id, "p"), records.CheckKey(id, 3, "p"), records.RedoKey(id, mid, "p"), "/jobs/" + id.String() + "/macro/0/micro/" + mid.String() + "/commit/p", "/nodes/p"} {
		if jobLevelKey(k) {
			t.Errorf("%s kept", k)
		}
	}
}

// TestEarlyJudge: of itself and the live processors heard working on a
// job, only the one with the highest finalizer hash judges it early; a
// processor above it that has gone quiet does not count.
func TestEarlyJudge(t *testing.T) {
	plan := roundsPlan(t)
	id := plan.JobID.String()
	peers := []string{"p1", "p2", "p3", "p4"}
	slices.SortFunc(peers, func(a, b string) int {
		ha, hb := records.RankHash(a, id, "finalizer"), records.RankHash(b, id, "finalizer")
		return bytes.Compare(hb[:], ha[:])
	})
	top, low := peers[0], peers[len(peers)-1]
	now := time.Now()
	w := &Worker{self: peers[1], cfg: Config{DiscloseGrace: time.Minute}, index: jobindex.New(nil)}
	js := (&jobState{}).withPlan(plan)
	if !w.earlyJudge(js, finish.Progress{}, now) {
		t.Fatal("a processor that heard nobody does not judge early")
	}
	mid := []jobs.ID{plan.Macros[0].Micros[0].ID}
	js.hints.Progress(low, mid, now)
	if !w.earlyJudge(js, finish.Progress{}, now) {
		t.Fatal("a processor below this one keeps it from judging early")
	}
	js.hints.Progress(top, mid, now.Add(-time.Second))
	if w.earlyJudge(js, finish.Progress{}, now) {
		t.Fatal("judges early beside a live processor above it")
	}
	js.hints.Progress(top, mid, now.Add(-2*time.Minute))
	if !w.earlyJudge(js, finish.Progress{}, now) {
		t.Fatal("a processor above it that went quiet keeps it from judging early")
	}
	w.self = top
	js = (&jobState{}).withPlan(plan)
	js.hints.Progress(peers[1], mid, now)
	js.hints.Progress(low, mid, now)
	if !w.earlyJudge(js, finish.Progress{}, now) {
		t.Fatal("the top processor does not judge early")
	}
}
