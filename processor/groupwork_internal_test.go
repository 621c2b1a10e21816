package processor

import (
	"slices"
	"testing"

	"github.com/jobmesh/jobmesh/groupjob"
	"github.com/jobmesh/jobmesh/jobs"
)

// TestRoomItems: a room of a job of one replica queues its MicroJobs by
// their plain IDs; a replicated job's room queues groupjob's tokens.
func TestRoomItems(t *testing.T) {
	info, plan := byteJob(t, 6, 2, jobs.Requirements{Replicas: 3})
	m := &plan.Macros[0]
	if got := roomItems((&jobState{info: info}).withPlan(plan), m); !slices.Equal(got, groupjob.RoomItems(m, 3)) {
		t.Fatalf("R=3 items %v", got)
	}
	info1 := *info
	info1.Requirements.Replicas = 1
	plan1, err := jobs.Slice(&info1)
	if err != nil {
		t.Fatal(err)
	}
	one := roomItems((&jobState{info: &info1}).withPlan(plan1), &plan1.Macros[0])
	for i, it := range one {
		if string(it) != plan1.Macros[0].Micros[i].ID.String() {
			t.Fatalf("R=1 item %d is %q", i, it)
		}
	}
}
