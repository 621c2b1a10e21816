package processor_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
)

// TestProgressSaidOncePerRoomByItsOwner: four processors each hold one
// MicroJob of a job whose rooms hold two or more MicroJobs, so that every
// room with two held has two members working in it. Once released, each
// room's MicroJobs are said complete on the Job channel in one progress
// message, by one processor, and in no other message: the room's owner
// speaks for it, its members say nothing. Per-member progress would name
// a room's MicroJobs in the messages of each processor that ran one. The
// verifiers are held until the rooms have been said: a room whose job has
// its verdict first says nothing (roomSettled).
func TestProgressSaidOncePerRoomByItsOwner(t *testing.T) {
	m, h := heldMesh(t, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	job := newMandelbrot(t, 128, 64, 32) // 8 tiles
	info, plan := submitPlan(t, ctx, m, job.spec(4, 2))
	releaseChecks := h.holdChecks(plan)
	defer releaseChecks()
	c := client(m)
	topic, err := jobs.JoinJobTopic(c.Host, info.ID())
	if err != nil {
		t.Fatal(err)
	}
	defer topic.Close()
	var pmu sync.Mutex
	var said []jobs.ChannelMsg // progress messages, in arrival order
	go func() {
		for {
			msg, err := topic.Next(ctx)
			if err != nil {
				return
			}
			if msg.Value.Kind == jobs.KindProgress {
				pmu.Lock()
				said = append(said, msg.Value)
				pmu.Unlock()
			}
		}
	}()
	// The MacroJob of each MicroJob of the public plan: those of the rooms.
	macroOf := map[string]uint64{}
	for _, mac := range plan.Macros {
		for _, mu := range mac.Micros {
			macroOf[mu.ID.String()] = mac.Index
		}
	}
	wait.Until(t, time.Minute, func() error {
		if n := len(h.held()); n < 4 {
			return fmt.Errorf("%d MicroJobs held, want one by each processor", n)
		}
		if n := len(topic.Peers()); n < 4 {
			return fmt.Errorf("%d peers on the job's channel, want the 4 processors", n)
		}
		return nil
	})
	shared := 0 // rooms in which two processors hold a MicroJob
	count := map[uint64]int{}
	for _, mid := range h.held() {
		count[macroOf[mid.String()]]++
	}
	for _, n := range count {
		if n >= 2 {
			shared++
		}
	}
	if shared == 0 {
		t.Fatalf("no room has two members working: held by MacroJob %v", count)
	}
	close(h.release)
	wait.Until(t, 2*time.Minute, func() error {
		pmu.Lock()
		defer pmu.Unlock()
		seen := map[string]bool{}
		for _, s := range said {
			for _, mid := range s.Micros() {
				if _, ok := macroOf[mid]; ok {
					seen[mid] = true
				}
			}
		}
		if len(seen) < len(macroOf) {
			var by []string
			for _, s := range said {
				by = append(by, fmt.Sprintf("%s: %d", s.Processor, len(s.Micros())))
			}
			return fmt.Errorf("%d of %d MicroJobs said complete (messages %v; held by MacroJob %v)", len(seen), len(macroOf), by, count)
		}
		return nil
	})
	releaseChecks()
	if _, err := c.DApp.Wait(ctx, info.ID(), 50*time.Millisecond); err != nil {
		t.Fatalf("the job: %v", err)
	}
	pmu.Lock()
	defer pmu.Unlock()
	inMessage := map[uint64]int{} // by MacroJob: the message that said it
	for i, s := range said {
		for _, mid := range s.Micros() {
			mac, ok := macroOf[mid]
			if !ok {
				continue // a verifier, added to the plan with the checks: its runner says it
			}
			if j, ok := inMessage[mac]; ok && j != i {
				t.Fatalf("MacroJob %d said complete in messages %d (by %s) and %d (by %s)", mac, j, said[j].Processor, i, s.Processor)
			}
			inMessage[mac] = i
		}
	}
	for mac, i := range inMessage {
		for mid, of := range macroOf {
			if of == mac && !slices.Contains(said[i].Micros(), mid) {
				t.Fatalf("MacroJob %d said complete without its MicroJob %s", mac, mid)
			}
		}
	}
}
