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
	"github.com/jobmesh/jobmesh/macrojob"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// TestRoomHoldsNoMoreThanItsWorkLeft: five processors and a job of one
// MacroJob of two MicroJobs. Two processors take them and hold them; the
// three others, free, find the room locked but join it not: only two
// processors could work in it at once. Every snapshot its owner publishes
// names at most two members, over many re-broadcasts, each of which the
// free processors' workers outlast by Poll periods; a room that every free
// processor joined would name five. Then the job finishes.
func TestRoomHoldsNoMoreThanItsWorkLeft(t *testing.T) {
	m, h := heldMesh(t, 5)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	job := newMandelbrot(t, 64, 64, 32) // 4 tiles
	info, plan := submitPlan(t, ctx, m, job.spec(2, 2))
	if len(plan.Macros) != 1 || len(plan.Macros[0].Micros) != 2 {
		t.Fatalf("plan of %d MacroJobs, the first of %d MicroJobs; want one of two", len(plan.Macros), len(plan.Macros[0].Micros))
	}
	name := macrojob.RoomName(info.ID().String(), plan.Macros[0].Index)
	c := client(m)
	room, err := p2p.Join(c.Host, p2p.TopicConfig[macrojob.Msg]{
		Name: macrojob.RoomTopic(name), Kind: "macrojob", MaxSize: macrojob.MaxMsgSize,
		Encode: macrojob.Encode, Decode: macrojob.Decode, Undiscovered: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer room.Close()
	wait.Until(t, time.Minute, func() error {
		if n := len(h.held()); n < 2 {
			return fmt.Errorf("%d MicroJobs held, want both", n)
		}
		for _, p := range processorsOf(m) {
			if _, ok := records.ReadRoomLock(ctx, p.Store, info.ID().String(), plan.Macros[0].Index); !ok {
				return fmt.Errorf("processor %d does not see the room's lock", p.Index)
			}
		}
		return nil
	})
	// Ten snapshots from here: at least three seconds of re-broadcasts,
	// fifteen Poll periods of every free worker.
	most, snapshots := 0, 0
	for snapshots < 10 {
		msg, err := room.Next(ctx)
		if err != nil {
			t.Fatalf("after %d snapshots: %v", snapshots, err)
		}
		if s, ok := msg.Value.(*macrojob.Snapshot); ok {
			snapshots++
			most = max(most, len(s.Members))
		}
	}
	if most > 2 {
		t.Fatalf("a snapshot names %d members of a room with two MicroJobs", most)
	}
	close(h.release)
	if _, err := c.DApp.Wait(ctx, info.ID(), 50*time.Millisecond); err != nil {
		t.Fatalf("the job: %v", err)
	}
}

// TestStalledRoomLetsTheNextRankIn: three processors and a job of one
// MacroJob of two MicroJobs. The first two processors to run one hold it
// until a third runs one: members that lock the room's MicroJobs and
// never commit them. The third, ranked after the two MicroJobs left,
// would never join the room; a processing timeout without a commitment
// lets it in, it runs a MicroJob whose lock lapsed, and the job finishes.
func TestStalledRoomLetsTheNextRankIn(t *testing.T) {
	var (
		mu       sync.Mutex
		stuck    = map[int]bool{} // the processors that hold
		released = make(chan struct{})
		ran      = map[int]bool{}
	)
	m := flowMesh(t, 3, func(mem *localmesh.Member, pc *processor.Config) {
		pc.Room.Queue.MaxLocksPerTurn = 1
		pc.Hold = func(ctx context.Context, _, _ jobs.ID) {
			mu.Lock()
			ran[mem.Index] = true
			if !stuck[mem.Index] && len(stuck) == 2 {
				select {
				case <-released:
				default:
					close(released)
				}
			}
			if len(stuck) < 2 {
				stuck[mem.Index] = true
			}
			hold := stuck[mem.Index]
			mu.Unlock()
			if hold {
				select {
				case <-released:
				case <-ctx.Done():
				}
			}
		}
	})
	job := newMandelbrot(t, 64, 64, 32) // 4 tiles
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	info, plan := submitPlan(t, ctx, m, job.spec(2, 2))
	if len(plan.Macros) != 1 || len(plan.Macros[0].Micros) != 2 {
		t.Fatalf("plan of %d MacroJobs, the first of %d MicroJobs; want one of two", len(plan.Macros), len(plan.Macros[0].Micros))
	}
	res, err := client(m).DApp.Wait(ctx, info.ID(), 100*time.Millisecond)
	if err != nil {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the job: %v; processors that ran a MicroJob %v, of which held %v; the client's store: %s", err, ran, stuck, judgeView(m, info))
	}
	checkComplete(t, info, res)
	mu.Lock()
	defer mu.Unlock()
	if len(ran) != 3 {
		t.Fatalf("processors that ran a MicroJob: %v; want all three", ran)
	}
}
