package processor_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// TestLateDuplicatesStillSettle: two of three processors hold every
// MicroJob they take until the third has committed every regular
// MicroJob (taking over their locks), then run what they held: their
// commitments come late, duplicates of the third's, and the checks are
// drawn when every processor has run some MicroJob a verifier checks.
// They never run the verifier, so the third runs it too, beside the
// regular MicroJobs it checks (self-checked blocks). The job is verified
// all the same, as a demo on a loaded machine needs.
func TestLateDuplicatesStillSettle(t *testing.T) {
	release, verifierTaken := make(chan struct{}), make(chan struct{})
	var regular sync.Map // jobs.ID → true: the plan's regular MicroJobs
	const fast = 3
	m := flowMesh(t, 3, func(mem *localmesh.Member, pc *processor.Config) {
		if mem.Index == fast {
			return
		}
		pc.Hold = func(ctx context.Context, _, micro jobs.ID) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			if _, ok := regular.Load(micro); !ok {
				// A verifier: left to the fast one, which takes it
				// over after a ProcessingTimeout.
				select {
				case <-verifierTaken:
				case <-ctx.Done():
				}
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	job := newMandelbrot(t, 128, 96, 32)
	info, err := client(m).DApp.Submit(ctx, job.spec(3, 4))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := jobs.Slice(info)
	if err != nil {
		t.Fatal(err)
	}
	for _, mu := range plan.Macros[0].Micros[:plan.Macros[0].Regular] {
		regular.Store(mu.ID, true)
	}
	self := m.Members[fast].Host.ID().String()
	// committed is how many MicroJobs the fast one committed.
	committed := func() (int, error) {
		recs, err := client(m).Store.Query(ctx, records.JobKey(info.ID())+"/")
		if err != nil {
			return 0, err
		}
		n := 0
		for _, r := range recs {
			if k, err := records.Parse(r.Key); err == nil && k.Type == records.CommitType && k.Peer == self {
				n++
			}
		}
		return n, nil
	}
	for _, step := range []struct {
		want int
		then chan struct{}
	}{{plan.Macros[0].Regular, release}, {plan.Macros[0].Regular + 1, verifierTaken}} {
		want, then := step.want, step.then
		wait.Until(t, 2*time.Minute, func() error {
			if n, err := committed(); err != nil || n < want {
				return fmt.Errorf("processor %d committed %d MicroJobs, want %d: %v", fast, n, want, err)
			}
			return nil
		})
		close(then)
	}
	res, err := client(m).DApp.Wait(ctx, info.ID(), 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	checkComplete(t, info, res)
}
