package processor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ipfs/go-cid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/custody"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/internal/jobtest"
	"github.com/jobmesh/jobmesh/jobindex"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// authorsMesh is a job on four real replicas under the flow's author
// policy: a ran every regular MicroJob and b every verifier, honestly,
// so a and b are the job's finalizers; c and x did no work. It returns
// once every replica holds the job's records.
func authorsMesh(t *testing.T) (*jobtest.Job, []*crdttest.Replica) {
	t.Helper()
	cl := crdttest.New(t, crdttest.Options{Replicas: 4, Configure: func(_ int, cfg *crdt.Config) {
		cfg.AuthorPolicy = records.AuthorPolicy()
	}})
	cl.WaitTopicMesh()
	rs := cl.Replicas
	f := jobtest.New(t, jobtest.Info(30))
	f.Publish(t, rs[0].Store)
	for m := range f.Plan.Macros {
		f.Run(t, rs[0].Store, m, false, jobtest.HonestHash, true)
		f.Run(t, rs[1].Store, m, true, jobtest.HonestHash, true)
	}
	waitRecords(t, rs, f, 13)
	return f, rs
}

// waitRecords waits until every replica holds n records under the job.
func waitRecords(t *testing.T, rs []*crdttest.Replica, f *jobtest.Job, n int) {
	t.Helper()
	for _, r := range rs {
		crdttest.WaitUntil(t, 20*time.Second, func() error {
			recs, err := r.Store.Query(context.Background(), records.JobKey(f.ID())+"/")
			if err != nil || len(recs) != n {
				return fmt.Errorf("replica %s holds %d of %d records (%v)", r.ID(), len(recs), n, err)
			}
			return nil
		})
	}
}

// testWorker is a worker on store s with its own metrics and a record
// index the store's watch keeps current, enough to judge and weigh a
// job's records.
func testWorker(t *testing.T, s *crdt.Store) *Worker {
	t.Helper()
	x := jobindex.New(s)
	ctx, cancel := context.WithCancel(context.Background())
	changes := s.Watch(ctx, "/jobs")
	done := make(chan struct{})
	go func() { defer close(done); x.Run(changes, nil, nil) }()
	t.Cleanup(func() { cancel(); <-done })
	w := &Worker{self: s.Self().String(), p: Params{Store: s}, index: x, writer: x.Writer(),
		m: newMetrics(prometheus.NewRegistry()), log: slog.New(slog.DiscardHandler)}
	k, err := custody.New(ctx, w.custodyParams(), w.cfg.custody())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	w.custody = k
	return w
}

// weighed judges f's job on w's replica and weighs its verdicts.
func weighed(t *testing.T, w *Worker, js *jobState) (finish.Judgement, []finish.VerdictCand) {
	t.Helper()
	ctx := context.Background()
	ver := w.index.Version(js.plan().JobID) // before the records, as the worker reads them
	recs, err := w.records(ctx, js.plan().JobID)
	if err != nil {
		t.Fatal(err)
	}
	j, err := w.judged(js, recs, ver)
	if err != nil {
		t.Fatal(err)
	}
	agree, err := w.weigh(ctx, js, recs, j)
	if err != nil {
		t.Fatal(err)
	}
	return j, agree
}

func refused(w *Worker, kind, reason string) float64 {
	return testutil.ToFloat64(w.m.refused.WithLabelValues(kind, reason))
}

// TestRecordsOfOutsidersAreRefused: a peer with no disclosure in the job
// writes a dispute, a check, a redo and a verdict (a true one) under its
// own keys. Every one is refused on read and counted once; none is
// accepted, and the job has no verdict. Under another peer's key the
// store itself refuses to write them.
func TestRecordsOfOutsidersAreRefused(t *testing.T) {
	f, rs := authorsMesh(t)
	a, b, x := rs[0], rs[1], rs[3]
	ctx := context.Background()
	id, xs := f.ID(), x.ID().String()
	block := f.Micros(0, true)[0].Blocks[0]
	d := records.Dispute{Dispute: microjob.Dispute{Block: block, Processors: [2]string{a.ID().String(), b.ID().String()}}, Third: rs[2].ID().String()}
	c := records.Check{Block: block, Processor: b.ID().String(), Hash: "00", Thirds: [2]string{a.ID().String(), xs}}
	micro := f.Micros(1, false)[0].ID
	for _, e := range []struct {
		key, typ string
		v        any
	}{
		{records.DisputeKey(id, block, xs), records.DisputeType, d},
		{records.CheckKey(id, block, xs), records.CheckType, c},
		{records.RedoKey(id, micro, xs), records.RedoType, records.Redo{Micro: micro.String(), Exclude: []string{a.ID().String()}}},
		{records.VerdictKey(id, xs), records.VerdictType, f.VerdictOf(t, x.Store, jobtest.CID(t, "out").String())},
	} {
		if err := crdt.PutJSON(ctx, x.Store, e.key, e.typ, e.v); err != nil {
			t.Fatalf("%s under its own key: %v", e.typ, err)
		}
		// The same record under a finalizer's key: the store refuses it.
		forged := e.key[:len(e.key)-len(xs)] + a.ID().String()
		if err := crdt.PutJSON(ctx, x.Store, forged, e.typ, e.v); !errors.Is(err, crdt.ErrPolicy) {
			t.Fatalf("%s under %s's key: %v, want ErrPolicy", e.typ, a.ID(), err)
		}
	}
	if err := records.AuthorPolicy()("/jobs/"+id.String()+"/verdict", a.ID()); err == nil {
		t.Fatal("the author policy lets a verdict be written under the key of the previous version, which names no author")
	}
	waitRecords(t, rs, f, 17)
	w := testWorker(t, a.Store)
	js := (&jobState{info: f.Info}).withPlan(f.Plan)
	for range 2 { // counted once, however often judged
		j, agree := weighed(t, w, js)
		if len(j.Recs.Dispute)+len(j.Recs.Checks)+len(j.Recs.Redo) != 0 || len(agree) != 0 {
			t.Fatalf("accepted from an outsider: disputes %v, checks %v, redos %v, verdicts %d", j.Recs.Dispute, j.Recs.Checks, j.Recs.Redo, len(agree))
		}
		w.mu.Lock()
		js.verdicts.judgedVer = 0 // judge again
		w.mu.Unlock()
	}
	for _, kind := range []string{records.DisputeType, records.CheckType, records.RedoType, records.VerdictType} {
		if n := refused(w, kind, finish.RefusedAuthor); n != 1 {
			t.Errorf("%s refused %v times for its author, want 1", kind, n)
		}
	}
	if _, err := finish.ReadVerdict(ctx, a.Store, nil, id, nil); !errors.Is(err, finish.ErrNoVerdict) {
		t.Fatalf("the outsider's verdict is reported: %v", err)
	}
}

// TestEligibleRecordsHighestRankedWins: both finalizers write a dispute
// and a check of one block and a verdict; the higher-ranked author's
// count, unless the settled resultRoot names the other's output. A
// lower-ranked finalizer's check that replaces the other's silent
// re-runner supersedes it until that re-runner answers. Records that
// break a content rule are refused.
func TestEligibleRecordsHighestRankedWins(t *testing.T) {
	f, rs := authorsMesh(t)
	a, b, c, x := rs[0], rs[1], rs[2], rs[3]
	ctx := context.Background()
	id := f.ID()
	hi, lo := a, b
	if ra, rb := finish.Rank(id, a.ID().String()), finish.Rank(id, b.ID().String()); bytes.Compare(rb[:], ra[:]) > 0 {
		hi, lo = b, a
	}
	block := f.Micros(0, true)[0].Blocks[0]
	sides := [2]string{"p", "q"}
	put := func(s *crdt.Store, key, typ string, v any) {
		t.Helper()
		if err := crdt.PutJSON(ctx, s, key, typ, v); err != nil {
			t.Fatal(err)
		}
	}
	// The four replicas advertise themselves: they are the re-run
	// candidates (no chain: each ranks by its peer ID), and every request
	// asks a prefix of its block's rerun order. hi and lo ask the same two
	// places, each naming another first, so that neither supersedes the
	// other and rank decides.
	var peers []string
	for _, r := range rs {
		put(r.Store, records.AdvertKey(r.ID().String()), records.AdvertType, map[string]any{"peer_id": r.ID().String(), "role": "processor"})
		peers = append(peers, r.ID().String())
	}
	var dorder, corder []string
	for _, sl := range finish.RerunOrder(id, records.DisputeType, block, finish.PeerCandidates(peers), sides[:]) {
		dorder = append(dorder, sl.Key)
	}
	for _, sl := range finish.RerunOrder(id, records.CheckType, block, finish.PeerCandidates(peers), []string{"p"}) {
		corder = append(corder, sl.Key)
	}
	first := map[*crdttest.Replica]int{hi: 0, lo: 1}
	for _, r := range []*crdttest.Replica{hi, lo} {
		me, i := r.ID().String(), first[r]
		put(r.Store, records.DisputeKey(id, block, me), records.DisputeType, records.Dispute{Dispute: microjob.Dispute{Block: block, Processors: sides}, Third: dorder[i], Dropped: []string{dorder[1-i]}})
		put(r.Store, records.CheckKey(id, block, me), records.CheckType, records.Check{Block: block, Processor: "p", Thirds: [2]string{corder[i], corder[1-i]}})
		f.PutVerdict(t, r.Store, f.VerdictOf(t, r.Store, jobtest.CID(t, "out by "+me).String()))
	}
	// Content rules: a third that is a side, a check re-run by its
	// processor, a redo that excludes a processor that is neither a
	// culprit nor a committer of the MicroJob.
	lb := block + 1
	me := lo.ID().String()
	put(lo.Store, records.DisputeKey(id, lb, me), records.DisputeType, records.Dispute{Dispute: microjob.Dispute{Block: lb, Processors: [2]string{me, "q"}}, Third: me})
	put(lo.Store, records.CheckKey(id, lb, me), records.CheckType, records.Check{Block: lb, Processor: "p", Thirds: [2]string{"p", x.ID().String()}})
	regular := f.Micros(1, false)[0].ID
	put(lo.Store, records.RedoKey(id, regular, me), records.RedoType, records.Redo{Micro: regular.String(), Exclude: []string{c.ID().String()}})
	waitRecords(t, rs, f, 22)
	crdttest.WaitUntil(t, 20*time.Second, func() error {
		got, err := finish.Processors(ctx, c.Store)
		if err != nil || len(got) != len(rs) {
			return fmt.Errorf("%d of %d advertisements (%v)", len(got), len(rs), err)
		}
		return nil
	})

	w := testWorker(t, c.Store)
	js := (&jobState{info: f.Info}).withPlan(f.Plan)
	j, agree := weighed(t, w, js)
	if got := j.Recs.Dispute[block].Third; got != dorder[0] {
		t.Errorf("the dispute kept names third %s, want the higher-ranked author's (%s)", got, dorder[0])
	}
	if got := j.Recs.Checks[block].Thirds[0]; got != corder[0] {
		t.Errorf("the check kept names %s first, want the higher-ranked author's (%s)", got, corder[0])
	}
	if len(agree) != 2 || agree[0].Author != hi.ID().String() {
		t.Fatalf("%d verdicts follow from the records, first %v; want both, %s's first", len(agree), agree, hi.ID())
	}
	for _, kind := range []string{records.DisputeType, records.CheckType, records.RedoType} {
		if n := refused(w, kind, finish.RefusedContent); n != 1 {
			t.Errorf("%s breaking a content rule refused %v times, want 1", kind, n)
		}
	}
	if _, ok := j.Recs.Dispute[lb]; ok {
		t.Error("a dispute whose third is a side counts")
	}
	chosen, err := finish.ReadVerdict(ctx, c.Store, nil, id, nil)
	if err != nil || chosen.Author != hi.ID().String() {
		t.Fatalf("reported %s's verdict (%v), want %s's", chosen.Author, err, hi.ID())
	}
	out, err := cid.Decode(agree[1].Rec.Output)
	if err != nil {
		t.Fatal(err)
	}
	root := common.Hash(records.ResultRoot(out))
	if chosen, err := finish.ReadVerdict(ctx, c.Store, nil, id, &root); err != nil || chosen.Author != lo.ID().String() {
		t.Fatalf("settled with %s's output, reported %s's verdict (%v)", lo.ID(), chosen.Author, err)
	}

	// The lower-ranked finalizer takes over: hi's second re-runner did not
	// answer; lo's check drops it for the next of the order, and
	// supersedes hi's.
	silent := corder[1]
	put(lo.Store, records.CheckKey(id, block, me), records.CheckType, records.Check{Block: block, Processor: "p", Thirds: [2]string{corder[0], corder[2]}, Dropped: []string{silent}})
	waitFor := func(want string) {
		t.Helper()
		crdttest.WaitUntil(t, 20*time.Second, func() error {
			j, _ := weighed(t, w, js)
			if got := j.Recs.Checks[block].Thirds[1]; got != want {
				return fmt.Errorf("the check kept asks %s, want %s", got, want)
			}
			return nil
		})
	}
	waitFor(corder[2])
	// The silent one re-runs after all: a check that dropped it
	// supersedes nothing.
	for _, r := range rs {
		if r.ID().String() == silent {
			put(r.Store, records.RerunKey(id, block, silent), records.RerunType, records.Rerun{Block: block, Hash: "00", Processor: silent})
		}
	}
	waitFor(silent)
}

// TestSignerRefusesAVerdictThatDoesNotFollow: a finalizer of the job (b,
// which did honest work) writes a verdict that names a, honest, culprit.
// It is refused and counted; a processor whose replica holds it is not
// finished by it, its signer refuses to sign, counted once, and the DApp
// reports no verdict. Then a's true verdict comes and is the one that
// counts.
func TestSignerRefusesAVerdictThatDoesNotFollow(t *testing.T) {
	f, rs := authorsMesh(t)
	a, b, c := rs[0], rs[1], rs[2]
	ctx := context.Background()
	forged := f.VerdictOf(t, b.Store, jobtest.CID(t, "out").String())
	forged.Culprits = []string{a.ID().String()}
	f.PutVerdict(t, b.Store, forged)
	waitRecords(t, rs, f, 14)

	w := testWorker(t, c.Store)
	js := (&jobState{info: f.Info, finished: true}).withPlan(f.Plan)
	recs, err := w.records(ctx, f.ID())
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, _, err := w.audit(ctx, js, recs); !errors.Is(err, errSignRefused) {
			t.Fatalf("signed for a verdict that names an honest culprit: %v", err)
		}
	}
	if n := testutil.ToFloat64(w.m.signRefusals.WithLabelValues(finish.MismatchCulprits)); n != 1 {
		t.Fatalf("%v sign refusals for the culprits, want 1", n)
	}
	if n := refused(w, records.VerdictType, finish.RefusedDisagrees); n != 1 {
		t.Fatalf("the forged verdict refused %v times, want 1", n)
	}
	if _, agree := weighed(t, w, js); len(agree) != 0 {
		t.Fatal("a verdict naming an honest culprit follows from the records")
	}
	if _, err := finish.ReadVerdict(ctx, c.Store, nil, f.ID(), nil); !errors.Is(err, finish.ErrNoVerdict) {
		t.Fatalf("the DApp reports the forged verdict: %v", err)
	}
	// The true verdict: it follows, and the signer's own record is it.
	honest := f.VerdictOf(t, a.Store, jobtest.CID(t, "out").String())
	f.PutVerdict(t, a.Store, honest)
	crdttest.WaitUntil(t, 20*time.Second, func() error {
		if _, agree := weighed(t, w, js); len(agree) != 1 || agree[0].Author != a.ID().String() {
			return fmt.Errorf("%d verdicts follow, want a's", len(agree))
		}
		return nil
	})
	if chosen, err := finish.ReadVerdict(ctx, c.Store, nil, f.ID(), nil); err != nil || chosen.Author != a.ID().String() {
		t.Fatalf("the DApp reports %q's verdict (%v), want a's", chosen.Author, err)
	}
}

// TestLateRecordReopensFinishedJob: a job finished by a verdict that
// followed from the records stays finished while nothing changes, and is
// reopened when a record comes later that changes the judgement (another
// processor's result), so that its finalizers write one that follows.
func TestLateRecordReopensFinishedJob(t *testing.T) {
	f, rs := authorsMesh(t)
	a, c := rs[0], rs[2]
	f.PutVerdict(t, a.Store, f.VerdictOf(t, a.Store, jobtest.CID(t, "out").String()))
	waitRecords(t, rs, f, 14)
	w := testWorker(t, c.Store)
	ctx := context.Background()
	js := finishedJob(t, w, f)
	if err := w.recheckFinished(ctx, js); err != nil || !js.finished {
		t.Fatalf("reopened with nothing new (%v)", err)
	}
	f.Result(t, c.Store, f.Micros(0, false)[0], jobtest.HonestHash, true)
	waitRechecked(t, w, js, false) // a verdict that leaves out a result finishes nothing
}

// TestSupersededVerdictIsWithdrawn: a finalizer's verdict that a later
// record supersedes (another processor's result) stays while no verdict
// follows from the records, since its author may still write the one
// that does; once another finalizer's follows, its author withdraws its
// own from every replica, and the job is finished by the other's.
func TestSupersededVerdictIsWithdrawn(t *testing.T) {
	f, rs := authorsMesh(t)
	a, b, c := rs[0], rs[1], rs[2]
	out := jobtest.CID(t, "out").String()
	f.PutVerdict(t, a.Store, f.VerdictOf(t, a.Store, out))
	waitRecords(t, rs, f, 14)
	w := testWorker(t, a.Store)
	ctx := context.Background()
	js := finishedJob(t, w, f)
	own := records.VerdictKey(f.ID(), a.ID().String())

	f.Result(t, c.Store, f.Micros(0, false)[0], jobtest.HonestHash, true)
	waitRecords(t, rs, f, 16)
	waitRechecked(t, w, js, false) // a verdict that leaves out a result finishes nothing
	if _, err := a.Store.Get(ctx, own); err != nil {
		t.Fatalf("a's verdict withdrawn while no other follows: %v", err)
	}

	f.PutVerdict(t, b.Store, f.VerdictOf(t, b.Store, out))
	waitRechecked(t, w, js, true) // by b's verdict
	for _, r := range rs {
		crdttest.WaitUntil(t, 20*time.Second, func() error {
			if _, err := r.Store.Get(ctx, own); !errors.Is(err, crdt.ErrNotFound) {
				return fmt.Errorf("replica %s still reads a's superseded verdict (%v)", r.ID(), err)
			}
			if _, err := r.Store.Get(ctx, records.VerdictKey(f.ID(), b.ID().String())); err != nil {
				return fmt.Errorf("replica %s lacks b's verdict: %v", r.ID(), err)
			}
			return nil
		})
	}
	if _, agree := weighed(t, w, js); len(agree) != 1 || agree[0].Author != b.ID().String() {
		t.Fatalf("%d verdicts follow after the withdrawal, want b's alone", len(agree))
	}
}

// waitRechecked rechecks js on w (recheckFinished) until it is finished,
// or until it is not.
func waitRechecked(t *testing.T, w *Worker, js *jobState, finished bool) {
	t.Helper()
	crdttest.WaitUntil(t, 20*time.Second, func() error {
		if err := w.recheckFinished(context.Background(), js); err != nil {
			return err
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if js.finished != finished {
			return fmt.Errorf("finished %v after a recheck, want %v", js.finished, finished)
		}
		return nil
	})
}

// finishedJob is f's job on w, finished by the one verdict that follows
// from w's records.
func finishedJob(t *testing.T, w *Worker, f *jobtest.Job) *jobState {
	t.Helper()
	js := (&jobState{info: f.Info}).withPlan(f.Plan)
	if _, agree := weighed(t, w, js); len(agree) != 1 {
		t.Fatalf("%d verdicts follow from the records, want 1", len(agree))
	}
	w.markFinished(js, w.index.JudgeVersion(f.ID()))
	return js
}
