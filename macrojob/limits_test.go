package macrojob

import (
	"testing"

	"github.com/jobmesh/jobmesh/jobs"
)

// A job that validates never needs a room larger than a queue holds.
func TestJobsQueueBoundMatchesQueue(t *testing.T) {
	if jobs.MaxQueueItems != MaxItems {
		t.Fatalf("jobs.MaxQueueItems = %d, macrojob.MaxItems = %d", jobs.MaxQueueItems, MaxItems)
	}
}
