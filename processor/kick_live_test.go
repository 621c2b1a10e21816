package processor_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
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
	// Only MicroJobs of jobs not yet released are held: a MicroJob of an
	// earlier job that the restarted victim takes while its replica
	// catches up runs, instead of taking the place of the current job's.
	var released sync.Map // jobs.ID → true
	held := make(chan jobs.ID, 1)
	m := flowMesh(t, 4, func(mem *localmesh.Member, pc *processor.Config) {
		pc.Room.Queue.MaxLocksPerTurn = 1 // work spreads: the victim is sure to get some
		if mem.Index != victim {
			return
		}
		pc.Hold = func(ctx context.Context, job, _ jobs.ID) {
			if _, done := released.Load(job); done || !holding.Load() {
				return
			}
			select {
			case held <- job:
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
		info := killLocker(t, ctx, m, victim, held, &released, job.spec(3, 4))
		res, err := client(m).DApp.Wait(ctx, info.ID(), 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		checkComplete(t, info, res)
		released.Store(info.ID(), true)
		if round == 1 {
			// Every node counts the timeout, and nobody kicks it yet.
			waitViews(t, ctx, m, "one timeout of the victim", func(v qosOf) bool {
				return v.timeouts == 1 && !v.kicked
			}, victimID)
			if err := m.Restart(ctx, victim); err != nil {
				t.Fatal(err)
			}
			// The restarted victim's replica has the first job's
			// records before the second job comes.
			waitViews(t, ctx, m, "the restarted victim caught up", func(v qosOf) bool {
				return v.timeouts == 1 && !v.kicked
			}, victimID)
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

// killLocker submits spec until the victim holds a MicroJob of the job
// it locked, waits until its took record has reached the client, and
// stops it. A job that the other processors complete before the victim
// takes any of it (the victim's replica still catching up after a
// restart) is released and submitted again.
func killLocker(t *testing.T, ctx context.Context, m *localmesh.Mesh, victim int, held <-chan jobs.ID, released *sync.Map, spec dapp.Spec) *jobs.JobInfo {
	t.Helper()
	const tries = 3
	var info *jobs.JobInfo
	for try := 1; info == nil; try++ {
		sub, err := client(m).DApp.Submit(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			_, _ = client(m).DApp.Wait(ctx, sub.ID(), 100*time.Millisecond)
		}()
	wait:
		for {
			select {
			case job := <-held:
				if job == sub.ID() {
					info = sub
					break wait
				}
				// left from an earlier job, by a second slot of the victim
			case <-finished:
				if ctx.Err() != nil {
					t.Fatal("the victim never took a MicroJob")
				}
				released.Store(sub.ID(), true)
				if try == tries {
					t.Fatalf("the victim took no MicroJob of %d jobs in a row", tries)
				}
				t.Logf("job %d finished before the victim took any of it; submitting another", try)
				break wait
			case <-ctx.Done():
				t.Fatal("the victim never took a MicroJob")
			}
		}
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
	var views []string // every running processor's, for the failure message
	err := waitFor(ctx, func() bool {
		got, views = got[:0], views[:0]
		all := true
		for _, mem := range processorsOf(m) {
			if mem.Node == nil || mem.Worker == nil {
				continue
			}
			v := mem.Worker.View()
			if v == nil {
				views = append(views, fmt.Sprintf("member %d: no view", mem.Index))
				all = false
				continue
			}
			var q qosOf
			q.kick, q.kicked = v.KickOf(id)
			if p, found := v.Processor(id); found {
				q.timeouts, q.tasks = p.Timeouts, v.Tasks
			}
			views = append(views, fmt.Sprintf("member %d: %+v; %s", mem.Index, q, syncState(ctx, mem)))
			if !ok(q) {
				all = false
				continue
			}
			got = append(got, q)
		}
		return all && len(got) > 0
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v; views: %s", what, err, strings.Join(views, "; "))
	}
	return got
}

// syncState says what a member's replica of the mesh store stands on,
// for a failure message: its peers and its heads, which a replica that
// is caught up shares with the others.
func syncState(ctx context.Context, mem *localmesh.Member) string {
	heads, err := mem.MeshStore().Heads(ctx)
	if err != nil {
		return fmt.Sprintf("%d peers, heads: %v", len(mem.Host.Network().Peers()), err)
	}
	short := make([]string, len(heads))
	for i, h := range heads {
		s := h.String()
		short[i] = s[len(s)-8:]
	}
	slices.Sort(short)
	return fmt.Sprintf("%d peers, mesh store heads %v", len(mem.Host.Network().Peers()), short)
}
