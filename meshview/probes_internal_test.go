package meshview

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/p2p/p2ptest"
	"github.com/jobmesh/jobmesh/probe"
)

func testPeer(t *testing.T) peer.ID { return p2ptest.NewPeerID(t) }

// probeRecords are the records of p's probe of window w with every
// member answering correctly, member i at +i+1 ms.
func probeRecords(t *testing.T, cfg probe.Config, w uint64, p peer.ID, members []peer.ID) crdttest.Records {
	at := uint64(cfg.ChallengeAt(w, p.String()).UnixNano())
	ids := []string{p.String()}
	for _, m := range members[1:] {
		ids = append(ids, m.String())
	}
	b, _ := json.Marshal(probe.Challenge{Window: w, Members: ids})
	recs := crdttest.Records{{Key: probe.ChallengeKey(w, p.String()), Type: probe.ChallengeType, Author: p, Seq: at, Payload: b}}
	want := probe.Expected(w, p.String())
	for i, m := range members {
		c, _ := json.Marshal(probe.NewAnswer(probe.CommitHash(want, m.String())))
		d, _ := json.Marshal(probe.NewAnswer(want))
		ms := uint64(time.Millisecond)
		recs = append(recs,
			crdt.Record{Key: probe.CommitKey(w, p.String(), m.String()), Type: probe.CommitType, Author: m, Seq: at + uint64(i+1)*ms, Payload: c},
			crdt.Record{Key: probe.ResultKey(w, p.String(), m.String()), Type: probe.ResultType, Author: m, Seq: at + uint64(i+2)*ms, Payload: d})
	}
	return recs
}

// TestFactsProbes: with no job at all, one probe gives each of its
// members a measured speed score, SpeedAt at the probe's end, once its
// deadline passed; a probe older than History windows is not replayed.
func TestFactsProbes(t *testing.T) {
	pcfg := probe.Config{Window: 20 * time.Second, Deadline: 5 * time.Second, History: 2}
	ps := []peer.ID{testPeer(t), testPeer(t), testPeer(t)}
	w := pcfg.WindowOf(time.Unix(1_700_000_000, 0))
	recs := probeRecords(t, pcfg, w, ps[0], ps)
	var dir staticDirectory
	for _, p := range ps {
		dir = append(dir, Advertised{PeerID: p.String(), Updated: pcfg.Start(w)})
	}
	end := pcfg.ChallengeAt(w, ps[0].String()).Add(pcfg.Deadline)
	now := end.Add(-time.Nanosecond)
	cfg := DefaultFactsConfig()
	cfg.Probes = pcfg
	f, err := NewFacts(FactsParams{Store: recs, Directory: dir, Now: func() time.Time { return now }}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	view := func() *View {
		v, err := f.View(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, p := range view().Processors {
		if !p.SpeedAt.IsZero() || p.SpeedScore != float64(cfg.Dispatch.NewNodeTaskScore) {
			t.Fatalf("before the deadline %s has speed %v at %v", p.ID, p.SpeedScore, p.SpeedAt)
		}
	}
	now = end
	v := view()
	if v.Tasks != 1 || v.Live() != 3 {
		t.Fatalf("%d tasks, %d live", v.Tasks, v.Live())
	}
	for _, p := range v.Processors {
		if !p.SpeedAt.Equal(end) {
			t.Fatalf("%s speed at %v, want %v", p.ID, p.SpeedAt, end)
		}
	}
	if first, _ := v.Processor(ps[0].String()); first.SpeedScore != float64(2*cfg.Dispatch.RoundScores[0]) {
		t.Fatalf("first answer scores %v", first.SpeedScore)
	}
	now = pcfg.Start(w + 2)
	if v := view(); v.Tasks != 0 {
		t.Fatalf("probe of window %d replayed in window %d with history 2", w, w+2)
	}
}

// TestReplayOrderProbes: probes merge with jobs by time, jobs first on a
// tie; a probe alone sets SpeedAt, and a rejoin clears it.
func TestReplayOrderProbes(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	job := &finishedJob{id: jobs.ID{1}, at: t0.Add(time.Second),
		tasks: []dispatch.TaskOutcome{{TaskID: "job", Assigned: []string{"a"}, Commits: []string{"a"}, Disclosures: []string{"a"}}}}
	pr := func(at time.Time, id string) probe.Task {
		return probe.Task{End: at, Outcome: dispatch.TaskOutcome{TaskID: id, Assigned: []string{"b"}, Commits: []string{"b"}, Disclosures: []string{"b"}}}
	}
	order := replayOrder([]*finishedJob{job}, []probe.Task{pr(t0.Add(time.Second), "p2"), pr(t0, "p1")})
	var got []string
	for _, o := range order {
		got = append(got, o.tasks[0].TaskID)
	}
	if want := []string{"p1", "job", "p2"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	r, err := replay(dispatch.DefaultConfig(), order, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.speedAt["b"].Equal(t0.Add(time.Second)) || !r.speedAt["a"].Equal(t0.Add(time.Second)) || r.tasks != 3 {
		t.Fatalf("speed at %v, %d tasks", r.speedAt, r.tasks)
	}
}
