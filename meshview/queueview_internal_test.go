package meshview

import (
	"context"
	"encoding/json"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/test"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/internal/jobtest"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// queueJob is the fixture's job with another price and GPU model, and
// its JobInfo record.
func queueJob(t *testing.T, seed byte, price int64, gpu string) (*jobs.JobInfo, *jobs.Plan, crdt.Record) {
	t.Helper()
	info := *jobtest.Info(seed)
	info.PriceWei = big.NewInt(price)
	info.Requirements.GPUModel = gpu
	plan, err := jobs.Slice(&info)
	if err != nil {
		t.Fatal(err)
	}
	return &info, plan, crdt.Record{Key: records.JobKey(info.ID()), Type: records.JobType, Payload: info.Encode()}
}

// TestReadQueue: the queue lists the open jobs in their dispatch groups,
// best value first, marks those with a commitment started, and leaves
// out aborted jobs, jobs with a verdict by one of their disclosers and
// jobs the view holds settled; a verdict by anyone else closes nothing.
func TestReadQueue(t *testing.T) {
	p, q := test.RandPeerIDFatal(t), test.RandPeerIDFatal(t)
	var recs crdttest.Records
	job := func(seed byte, price int64, gpu string) *jobs.Plan {
		_, plan, r := queueJob(t, seed, price, gpu)
		recs = append(recs, r)
		return plan
	}
	micro := func(plan *jobs.Plan) jobs.ID { return plan.Macros[0].Micros[0].ID }
	result := func(plan *jobs.Plan, who peer.ID) {
		recs = append(recs, crdt.Record{Key: records.ResultKey(plan.JobID, 0, micro(plan), who.String()), Type: records.ResultType, Author: who})
	}
	verdict := func(plan *jobs.Plan, who peer.ID) {
		recs = append(recs, crdt.Record{Key: records.VerdictKey(plan.JobID, who.String()), Type: records.VerdictType, Author: who})
	}
	started := job(1, 100, "")
	recs = append(recs, crdt.Record{Key: records.CommitKey(started.JobID, 0, micro(started), p.String()), Type: records.CommitType, Author: p})
	best := job(2, 1000, "")
	big := job(3, 10, "big")
	aborted := job(4, 5000, "")
	body, err := json.Marshal(records.NewJobAborted(aborted.JobID))
	if err != nil {
		t.Fatal(err)
	}
	recs = append(recs, crdt.Record{Key: records.AbortedKey(aborted.JobID), Type: records.AbortedType, Payload: body})
	finished := job(5, 5000, "")
	result(finished, p)
	verdict(finished, p)
	outsider := job(6, 50, "")
	result(outsider, p)
	verdict(outsider, q)
	settled := job(7, 9000, "") // no records here but its JobInfo

	cfg := dispatch.DefaultConfig()
	view := NewView(time.Now(), []ProcessorView{{Node: dispatch.Node{ID: "a"}}, {Node: dispatch.Node{ID: "b"}}, {Node: dispatch.Node{ID: "c"}}})
	view.settled = map[jobs.ID]bool{settled.JobID: true}
	v, err := ReadQueue(context.Background(), recs, cfg, view)
	if err != nil {
		t.Fatal(err)
	}
	if v.Live != 3 || v.Cap != max(int(cfg.QueueAlpha*3), cfg.MinQueueLen) {
		t.Fatalf("live %d, cap %d", v.Live, v.Cap)
	}
	var got [][]jobs.ID
	var labels []string
	for _, g := range v.Groups {
		labels = append(labels, g.Label)
		var ids []jobs.ID
		for _, j := range g.Jobs {
			ids = append(ids, j.ID)
			if j.Started != (j.ID == started.JobID) || j.Value == nil || j.Estimated <= 0 {
				t.Errorf("job %s: started %v, value %v, estimated %v", j.ID, j.Started, j.Value, j.Estimated)
			}
		}
		got = append(got, ids)
	}
	want := [][]jobs.ID{{best.JobID, started.JobID, outsider.JobID}, {big.JobID}}
	if len(got) != len(want) || !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
		t.Fatalf("groups %v: %v, want %v", labels, got, want)
	}
	if labels[1] != dispatch.GroupLabel(dispatch.Job{GPUModel: "big"}) {
		t.Fatalf("labels %v", labels)
	}
	finishedIDs, err := FinishedJobs(context.Background(), recs)
	if err != nil || !slices.Equal(finishedIDs, []jobs.ID{finished.JobID}) {
		t.Fatalf("finished %v (%v), want only the job with its discloser's verdict", finishedIDs, err)
	}
}
