package meshview

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/internal/jobtest"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// TestFactsQoSFromRecords: three processors on a real replicated store
// work on two jobs of two MacroJobs each; the third commits but never
// discloses. Every replica derives the same task outcomes from the
// verdicts (commit order by record seq), the first committer has the best
// speed score, and the silent one is kicked out for its timeouts (2 of
// the last 3 tasks) and weighs 0.
func TestFactsQoSFromRecords(t *testing.T) {
	cl := crdttest.New(t, crdttest.Options{Replicas: 3})
	cl.WaitTopicMesh()
	a, b, c := cl.Replicas[0], cl.Replicas[1], cl.Replicas[2]
	now := time.Now()
	var dir staticDirectory
	for _, r := range cl.Replicas {
		dir = append(dir, Advertised{PeerID: r.ID().String(), CardModel: "cpu", VRAMMiB: 1024, Timeout: time.Minute, Updated: now})
	}
	var finished []jobs.ID
	for round := range 2 {
		f := jobtest.New(t, jobtest.Info(byte(10+round)))
		f.Publish(t, a.Store)
		for m := range f.Plan.Macros {
			f.Run(t, a.Store, m, false, jobtest.HonestHash, true)
		}
		for m := range f.Plan.Macros {
			f.Run(t, b.Store, m, true, jobtest.HonestHash, true)
		}
		for m := range f.Plan.Macros {
			f.Run(t, c.Store, m, false, jobtest.HonestHash, false)
		}
		// a finalizes once its replica holds the reveal and every result: 10
		// commitments, 6 disclosures.
		crdttest.WaitUntil(t, 20*time.Second, func() error {
			recs, err := a.Store.Query(context.Background(), records.JobKey(f.ID()))
			if err != nil || len(recs) != 17 {
				return fmt.Errorf("replica a holds %d records of job %d (%v)", len(recs), round, err)
			}
			return nil
		})
		f.PutVerdict(t, a.Store, f.VerdictOf(t, a.Store, jobtest.CID(t, "out").String()))
		finished = append(finished, f.ID())
	}
	views := make([]*View, len(cl.Replicas))
	for i, r := range cl.Replicas {
		f, err := NewFacts(FactsParams{Store: r.Store, Directory: dir, Now: func() time.Time { return now }}, DefaultFactsConfig())
		if err != nil {
			t.Fatal(err)
		}
		// Wait until the replica holds every record: 2 jobs × (the job,
		// its reveal, 10 commitments, 6 disclosures, the verdict).
		crdttest.WaitUntil(t, 20*time.Second, func() error {
			recs, err := r.Store.Query(context.Background(), "/jobs")
			if err != nil || len(recs) != 38 {
				return fmt.Errorf("replica %d holds %d records (%v)", i, len(recs), err)
			}
			return nil
		})
		if views[i], err = f.View(context.Background(), finished); err != nil {
			t.Fatal(err)
		}
	}
	for i, v := range views {
		if v.Tasks != 4 || v.Live() != 3 {
			t.Fatalf("replica %d: %d tasks, %d live", i, v.Tasks, v.Live())
		}
		for _, p := range views[0].Processors {
			q, _ := v.Processor(p.ID)
			if q.SpeedScore != p.SpeedScore || q.Weight != p.Weight || (q.Kick == nil) != (p.Kick == nil) {
				t.Fatalf("replica %d disagrees on %s: %+v vs %+v", i, p.ID, q, p)
			}
		}
	}
	v := views[0]
	pa, _ := v.Processor(a.ID().String())
	pb, _ := v.Processor(b.ID().String())
	pc, _ := v.Processor(c.ID().String())
	// a committed first and disclosed first: 10 + 10 in both tasks.
	if pa.SpeedScore != 20 || pb.SpeedScore != 10 {
		t.Errorf("speed scores a %v, b %v; want 20 and 10", pa.SpeedScore, pb.SpeedScore)
	}
	if pc.Kick == nil || pc.Kick.Reason != dispatch.KickTimeouts || pc.Weight != 0 || !v.Kicked(c.ID().String()) {
		t.Errorf("silent processor: kick %+v, weight %v; want kicked for timeouts, weight 0", pc.Kick, pc.Weight)
	}
	if pa.Weight <= pb.Weight || pb.Weight <= 0 {
		t.Errorf("weights a %v, b %v: want a > b > 0", pa.Weight, pb.Weight)
	}
	// The chooser never picks a kicked processor while another waits.
	ids := []string{c.ID().String(), b.ID().String()}
	for s := range 200 {
		i, ok := v.Pick(dispatch.Job{}, ids, dispatch.Seed([]byte{byte(s)}))
		if !ok || i != 1 {
			t.Fatalf("seed %d: picked %d (%v)", s, i, ok)
		}
	}
	if _, ok := v.Pick(dispatch.Job{}, ids[:1], []byte("seed")); ok {
		t.Fatal("picked among kicked processors only")
	}
	// A stale advertisement is not live.
	old := slices.Clone(dir)
	old[1].Updated = now.Add(-time.Hour)
	f, _ := NewFacts(FactsParams{Store: a.Store, Directory: old, Now: func() time.Time { return now }}, DefaultFactsConfig())
	if v, err := f.View(context.Background(), finished); err != nil || v.Live() != 2 {
		t.Fatalf("with a stale advertisement: %v live (%v), want 2", v.Live(), err)
	}
}

// TestFactsQoSIgnoresForgedRounds: the records say a committed and
// disclosed before b, and a's verdict says so; b, a processor of the job,
// writes a verdict whose rounds say b was first. Every node's QoS follows
// the verdict that follows from the records, whichever author ranks
// higher, and refuses b's.
func TestFactsQoSIgnoresForgedRounds(t *testing.T) {
	cl := crdttest.New(t, crdttest.Options{Replicas: 2})
	cl.WaitTopicMesh()
	a, b := cl.Replicas[0], cl.Replicas[1]
	now := time.Now()
	dir := staticDirectory{
		{PeerID: a.ID().String(), CardModel: "cpu", VRAMMiB: 1024, Timeout: time.Minute, Updated: now},
		{PeerID: b.ID().String(), CardModel: "cpu", VRAMMiB: 1024, Timeout: time.Minute, Updated: now},
	}
	f := jobtest.New(t, jobtest.Info(20))
	f.Publish(t, a.Store)
	for m := range f.Plan.Macros {
		f.Run(t, a.Store, m, false, jobtest.HonestHash, true)
	}
	for m := range f.Plan.Macros {
		f.Run(t, b.Store, m, true, jobtest.HonestHash, true)
	}
	for _, r := range cl.Replicas {
		crdttest.WaitUntil(t, 20*time.Second, func() error {
			recs, err := r.Store.Query(context.Background(), records.JobKey(f.ID()))
			if err != nil || len(recs) != 13 { // the JobInfo, its reveal and 11 results
				return fmt.Errorf("replica %s holds %d records (%v)", r.ID(), len(recs), err)
			}
			return nil
		})
	}
	honest := f.VerdictOf(t, a.Store, jobtest.CID(t, "out").String())
	f.PutVerdict(t, a.Store, honest)
	forged := f.VerdictOf(t, b.Store, jobtest.CID(t, "out").String())
	first := []string{b.ID().String(), a.ID().String()}
	for i := range forged.Rounds {
		forged.Rounds[i].Commits, forged.Rounds[i].Disclosures = first, first
	}
	f.PutVerdict(t, b.Store, forged)
	for i, r := range cl.Replicas {
		crdttest.WaitUntil(t, 20*time.Second, func() error {
			recs, err := r.Store.Query(context.Background(), records.VerdictPrefix(f.ID()))
			if err != nil || len(recs) != 2 {
				return fmt.Errorf("replica %d holds %d verdicts (%v)", i, len(recs), err)
			}
			return nil
		})
		chosen, err := finish.ReadVerdict(context.Background(), r.Store, nil, f.ID(), nil)
		if err != nil || chosen.Author != a.ID().String() {
			t.Fatalf("replica %d chose %q's verdict (%v), want a's", i, chosen.Author, err)
		}
		fc, err := NewFacts(FactsParams{Store: r.Store, Directory: dir, Now: func() time.Time { return now }}, DefaultFactsConfig())
		if err != nil {
			t.Fatal(err)
		}
		view, err := fc.View(context.Background(), []jobs.ID{f.ID()})
		if err != nil {
			t.Fatal(err)
		}
		pa, _ := view.Processor(a.ID().String())
		pb, _ := view.Processor(b.ID().String())
		if view.Tasks != 2 || pa.SpeedScore != 20 || pb.SpeedScore != 10 {
			t.Fatalf("replica %d: %d tasks, speed a %v b %v; want 2 tasks, a 20, b 10", i, view.Tasks, pa.SpeedScore, pb.SpeedScore)
		}
	}
}

func TestAdvertLive(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	ttl := 30 * time.Minute
	for _, c := range []struct {
		updated time.Time
		want    bool
	}{
		{now, true},
		{now.Add(-ttl), true},
		{now.Add(-ttl - time.Second), false},
		{now.Add(ttl), true},
		{now.Add(ttl + time.Second), false},
	} {
		if got := AdvertLive(c.updated, now, ttl); got != c.want {
			t.Errorf("AdvertLive(now%+v) = %v, want %v", c.updated.Sub(now), got, c.want)
		}
	}
}
