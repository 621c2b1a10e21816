package processor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/records"
)

// TestRoomStoresCarryAMacroJobsRecords runs a job of many MacroJobs on
// four processors with room stores: each MacroJob's took records,
// commitments and disclosures are written to its room's store, and the
// job's nodes outside a room read them from the MacroJob's aggregates in
// the job's store. The job is verified; every processor reads every
// commitment and disclosure of every MacroJob, whether it held the room's
// store or not, and some read MacroJobs whose rooms they never held.
func TestRoomStoresCarryAMacroJobsRecords(t *testing.T) {
	m := flowMeshWith(t, localmesh.Options{
		Processors: 4,
		Configure: func(_ *localmesh.Member, cfg *node.Config) {
			cfg.Store.JobStores = node.JobStoresOn
			cfg.Store.RoomStores = true
		},
	}, nil)
	job := newMandelbrot(t, 96, 96, 16)
	info, res := runJob(t, m, job.spec(2, 1), 3*time.Minute)
	checkComplete(t, info, res)
	plan, err := jobs.Slice(info)
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID()
	ctx := context.Background()
	outside := 0
	for _, mem := range m.Running() {
		if mem.Role != node.RoleProcessor {
			continue
		}
		held := map[uint64]bool{}
		for _, macro := range mem.JobStores().RoomsOf(id) {
			held[macro] = true
		}
		for _, r := range res.Verdict.Results {
			micro, err := jobs.ParseHash(r.MicroID)
			if err != nil {
				t.Fatal(err)
			}
			for _, typ := range []string{records.CommitType, records.ResultType} {
				key := records.Key{Type: typ, Job: id, Macro: r.Macro, Micro: micro, Peer: r.Processor}.String()
				if _, err := mem.Store.Get(ctx, key); err != nil {
					t.Fatalf("processor %d cannot read %s (room held: %v): %v", mem.Index, key, held[r.Macro], err)
				}
			}
		}
		for macro := range uint64(len(plan.Macros)) {
			if held[macro] {
				continue
			}
			outside++
			job, ok := mem.JobStores().Get(id)
			if !ok {
				t.Fatalf("processor %d dropped the job's store", mem.Index)
			}
			crdttest.WaitUntil(t, 10*time.Second, func() error {
				recs, err := job.Query(ctx, records.JobKey(id)+"/macro/")
				if err != nil {
					return err
				}
				for _, r := range recs {
					if k, err := records.Parse(r.Key); err == nil && k.Macro == macro && k.Type == records.ResultType {
						return nil
					}
				}
				return fmt.Errorf("processor %d's job store has no disclosure of MacroJob %d", mem.Index, macro)
			})
		}
	}
	if outside == 0 {
		t.Fatal("every processor held every room's store: the test shows nothing")
	}
}
