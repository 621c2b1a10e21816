package processor_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// TestKilledLockerIsKickedAndRejoins follows seed 003's kick-out and
// return on a live mesh. A processor that locks MicroJobs and is killed
// before it commits is counted as a timeout by every node: its took
// record outlives the takeover of its MicroJobs. After a second such job
// (dispatch.DefaultConfig: 2 timeouts of the last 3 tasks), every node
// agrees that it is kicked, from the same task. Restarted, it advertises
// a start after its kick, rejoins, completes work on a third job, and no
// node counts it kicked or timed out.
func TestKilledLockerIsKickedAndRejoins(t *testing.T) {
	const victim = 1
	var holding atomic.Bool
	holding.Store(true)
	// current are the regular MicroJobs of the job being submitted: only
	// those are held, so that a MicroJob of an earlier job that the
	// restarted victim takes while its replica catches up runs, instead of
	// taking the place of the current job's.
	var current atomic.Pointer[map[jobs.ID]bool]
	current.Store(&map[jobs.ID]bool{})
	held := make(chan jobs.ID, 1)
	m := flowMesh(t, 4, func(mem *localmesh.Member, pc *processor.Config) {
		pc.Room.Queue.MaxLocksPerTurn = 1 // work spreads: the victim is sure to get some
		if mem.Index != victim {
			return
		}
		pc.Hold = func(ctx context.Context, micro jobs.ID) {
			if !holding.Load() || !(*current.Load())[micro] {
				return
			}
			select {
			case held <- micro:
			default:
			}
			<-ctx.Done()
		}
	})
	victimID := m.Members[victim].Host.ID().String()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// Ten MacroJobs: the victim is sure to take work before the others
	// finish the job.
	job := newMandelbrot(t, 384, 320, 32)

	for round := 1; round <= 2; round++ {
		info := killLocker(t, ctx, m, victim, held, &current, job.spec(3, 4))
		res, err := client(m).DApp.Wait(ctx, info.ID(), 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		checkComplete(t, info, res)
		if round == 1 {
			// Every node counts the timeout, and nobody kicks it yet.
			waitViews(t, ctx, m, "one timeout of the victim", func(v qosOf) bool {
				return v.timeouts == 1 && !v.kicked
			}, victimID)
		}
		if round == 1 {
			if err := m.Restart(ctx, victim); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Kicked on every node, by the same task at the same time.
	kicks := waitViews(t, ctx, m, "the victim kicked for timeouts", func(v qosOf) bool {
		return v.kicked && v.kick.Reason == dispatch.KickTimeouts
	}, victimID)
	for _, k := range kicks[1:] {
		if k.kick != kicks[0].kick {
			t.Fatalf("nodes disagree on the kick: %+v and %+v", kicks[0].kick, k.kick)
		}
	}

	// Restarted, it advertises a start after its kick: it rejoins.
	holding.Store(false)
	if err := m.Restart(ctx, victim); err != nil {
		t.Fatal(err)
	}
	info, err := client(m).DApp.Submit(ctx, job.spec(3, 4))
	if err != nil {
		t.Fatal(err)
	}
	res, err := client(m).DApp.Wait(ctx, info.ID(), 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	checkComplete(t, info, res)
	if !slices.ContainsFunc(res.Verdict.Results, func(r microjob.Result) bool { return r.Processor == victimID }) {
		t.Fatal("the rejoined processor completed nothing on the third job")
	}
	waitViews(t, ctx, m, "the rejoined victim not kicked, no timeouts", func(v qosOf) bool {
		return !v.kicked && v.timeouts == 0 && v.tasks > 0
	}, victimID)
}

// killLocker submits spec, waits until the victim holds a MicroJob it
// locked and its took record has reached the client, and stops it.
func killLocker(t *testing.T, ctx context.Context, m *localmesh.Mesh, victim int, held <-chan jobs.ID, current *atomic.Pointer[map[jobs.ID]bool], spec dapp.Spec) *jobs.JobInfo {
	t.Helper()
	select {
	case <-held: // left from the last job, by a second slot of the victim
	default:
	}
	info, err := client(m).DApp.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := jobs.Slice(info)
	if err != nil {
		t.Fatal(err)
	}
	micros := map[jobs.ID]bool{}
	for _, mj := range plan.Macros {
		for _, mu := range mj.Micros {
			micros[mu.ID] = true
		}
	}
	current.Store(&micros)
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("the victim never took a MicroJob")
	}
	victimID := m.Members[victim].Host.ID().String()
	store := client(m).Store
	if err := waitFor(ctx, func() bool {
		recs, err := store.Query(ctx, records.JobKey(info.ID())+"/macro/")
		return err == nil && slices.ContainsFunc(recs, func(r crdt.Record) bool {
			return r.Type == records.TookType && r.Author.String() == victimID
		})
	}); err != nil {
		t.Fatalf("the victim's took record never reached the client: %v", err)
	}
	if err := m.Stop(victim); err != nil {
		t.Fatal(err)
	}
	return info
}

// qosOf is what one node's dispatch view says of a processor.
type qosOf struct {
	timeouts int
	tasks    int
	kicked   bool
	kick     dispatch.Kick
}

// waitViews waits until every running processor's view of processor id
// satisfies ok, and returns what each says.
func waitViews(t *testing.T, ctx context.Context, m *localmesh.Mesh, what string, ok func(qosOf) bool, id string) []qosOf {
	t.Helper()
	var got []qosOf
	err := waitFor(ctx, func() bool {
		got = got[:0]
		for _, mem := range processorsOf(m) {
			if mem.Node == nil || mem.Worker == nil {
				continue
			}
			v := mem.Worker.View()
			if v == nil {
				return false
			}
			var q qosOf
			q.kick, q.kicked = v.KickOf(id)
			if p, found := v.Processor(id); found {
				q.timeouts, q.tasks = p.Timeouts, v.Tasks
			}
			if !ok(q) {
				return false
			}
			got = append(got, q)
		}
		return len(got) > 0
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v; views: %+v", what, err, got)
	}
	return got
}
