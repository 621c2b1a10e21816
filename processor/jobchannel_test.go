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
)

// TestRoomRequestsAnsweredOncePerWindow: a peer asks a job's channel for
// its rooms ten times at once, while every room has members. Each room is
// answered within a window by its owner, at most twice (at once and at the
// window's end), however often the peer asked; the members are quiet. A
// request that made every member answer for every room would let one peer
// multiply the channel's traffic by the rooms' members, ten times over.
func TestRoomRequestsAnsweredOncePerWindow(t *testing.T) {
	testRoomsAnswered(t, func(info *jobs.JobInfo, _ *jobs.Plan, _ string) []jobs.ChannelMsg {
		var ask []jobs.ChannelMsg
		for range 10 {
			ask = append(ask, jobs.ChannelMsg{Kind: jobs.KindRooms, JobID: info.ID().String()})
		}
		return ask
	})
}

// TestRoomClaimsAnsweredByOwner: a peer that finds a room neither locked
// nor announced claims it before opening it. Each room's owner answers the
// claims with its announcement, within a window and at most twice, so the
// claimant joins the room instead of opening it again.
func TestRoomClaimsAnsweredByOwner(t *testing.T) {
	testRoomsAnswered(t, func(info *jobs.JobInfo, plan *jobs.Plan, self string) []jobs.ChannelMsg {
		var claims []jobs.ChannelMsg
		for range 3 {
			for _, mac := range plan.Macros {
				claims = append(claims, jobs.ChannelMsg{Kind: jobs.KindRoom, JobID: info.ID().String(), Macro: mac.Index, Processor: self})
			}
		}
		return claims
	})
}

// testRoomsAnswered publishes what ask returns on the Job channel of a job
// whose every room has members, and checks that each room is answered by
// its owner, within a window and at most twice.
func testRoomsAnswered(t *testing.T, ask func(info *jobs.JobInfo, plan *jobs.Plan, self string) []jobs.ChannelMsg) {
	t.Helper()
	const window = 3 * time.Second
	var mu sync.Mutex
	held := map[jobs.ID]bool{} // MicroJobs held in a run
	m := flowMesh(t, 4, func(_ *localmesh.Member, pc *processor.Config) {
		pc.ProgressWindow = window
		// One MicroJob per turn, so that every processor gets one and
		// each room has more than its owner.
		pc.Room.Queue.MaxLocksPerTurn = 1
		pc.Hold = func(ctx context.Context, _, micro jobs.ID) {
			mu.Lock()
			held[micro] = true
			mu.Unlock()
			<-ctx.Done()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	job := newMandelbrot(t, 192, 160, 32)
	info, plan := submitPlan(t, ctx, m, job.spec(6, 2))
	// Every processor is in a room, held there by a MicroJob: no queue
	// changes hands. The rooms with a MicroJob held have an owner.
	rooms := map[uint64]bool{}
	wait.Until(t, time.Minute, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(held) < 4 {
			return fmt.Errorf("%d MicroJobs held, want one by each processor", len(held))
		}
		for _, mac := range plan.Macros {
			for _, mu := range mac.Micros {
				if held[mu.ID] {
					rooms[mac.Index] = true
				}
			}
		}
		return nil
	})

	c := client(m)
	topic, err := jobs.JoinJobTopic(c.Host, info.ID())
	if err != nil {
		t.Fatal(err)
	}
	defer topic.Close()
	wait.Until(t, 30*time.Second, func() error {
		if n := len(topic.Peers()); n < 4 {
			return fmt.Errorf("%d peers on the job's channel, want the 4 processors", n)
		}
		return nil
	})
	type answer struct {
		from string
		at   time.Time
	}
	var amu sync.Mutex
	answers := map[uint64][]answer{}
	go func() {
		for {
			msg, err := topic.Next(ctx)
			if err != nil {
				return
			}
			if v := msg.Value; v.Kind == jobs.KindRoom && v.Open > 0 {
				amu.Lock()
				answers[v.Macro] = append(answers[v.Macro], answer{v.Processor, time.Now()})
				amu.Unlock()
			}
		}
	}()
	asked := time.Now()
	for _, msg := range ask(info, plan, c.Host.ID().String()) {
		if err := topic.Publish(ctx, msg); err != nil {
			t.Fatal(err)
		}
	}
	// Every request is answered within a window of its arrival: the
	// answers are all in once a window (and a second for delivery) has
	// passed since the last request and every room has one.
	var last time.Time
	wait.Until(t, 30*time.Second, func() error {
		if time.Since(asked) < window+time.Second {
			return fmt.Errorf("the window is not over")
		}
		amu.Lock()
		defer amu.Unlock()
		for r := range rooms {
			if len(answers[r]) == 0 {
				return fmt.Errorf("room %d not answered", r)
			}
		}
		last = time.Now()
		return nil
	})
	amu.Lock()
	defer amu.Unlock()
	for _, mac := range plan.Macros {
		by := map[string]int{}
		for _, a := range answers[mac.Index] {
			if a.at.Before(last) {
				by[a.from]++
			}
		}
		// Its owner answers, at once and at the window's end at most;
		// two owners when the queue passed between them meanwhile.
		for p, n := range by {
			if n > 2 || len(by) > 2 {
				t.Errorf("room %d: %d answers from %s, %d answering processors; want its owner, at most twice", mac.Index, n, p, len(by))
			}
		}
	}
}
