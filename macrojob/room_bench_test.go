package macrojob

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/internal/wait"
)

// benchRoomNodes starts n fully connected hosts on 127.0.0.1, each with a
// real block layer and replicated store (the room's creator writes its lock
// there).
func benchRoomNodes(b *testing.B, n int) []testNode {
	b.Helper()
	return testNodes(b, n)
}

// joinBenchRoom joins every node to MacroJob macro's room, node 0 creating
// it, and waits until every node's gossipsub sees every other on the
// room's channel, so that the handoffs measured next do not include joining.
func joinBenchRoom(b *testing.B, nodes []testNode, macro uint64, items int) []*Room {
	b.Helper()
	ids := make([]ID, items)
	for i := range ids {
		ids[i] = ID("micro" + strconv.Itoa(i))
	}
	creator := PeerID(nodes[0].host.ID().String())
	var rooms []*Room
	for _, n := range nodes {
		r, err := JoinRoom(context.Background(), RoomParams{
			Host: n.host, Store: n.store, JobID: "benchjob", Macro: macro, Items: ids, Creator: creator,
			Logger: slog.New(slog.DiscardHandler),
		}, RoomConfig{})
		if err != nil {
			b.Fatal(err)
		}
		rooms = append(rooms, r)
	}
	topic := RoomTopic(RoomName("benchjob", macro))
	wait.Until(b, 30*time.Second, func() error {
		for i, n := range nodes {
			if got := len(n.host.PubSub.ListPeers(topic)); got < len(nodes)-1 {
				return fmt.Errorf("node %d sees %d of %d peers on %s", i, got, len(nodes)-1, topic)
			}
		}
		return nil
	})
	return rooms
}

// BenchmarkRoomHandoff measures a queue handoff over the real channel:
// from Room.Next on a node that does not own the queue until it returns a
// MicroJob, which needs the request to reach the owner over gossipsub, the
// owner to hand the queue over, and the handoff snapshot to come back.
// Rooms of 11 MicroJobs (N = 10 and a verifier); each handoff's requester
// is the node after the owner (as the last requester sees it), and it completes the MicroJob (untimed)
// before the next handoff. Reports p50 and p99 in ms.
func BenchmarkRoomHandoff(b *testing.B) {
	for _, n := range []int{3, 10} {
		b.Run("nodes="+strconv.Itoa(n), func(b *testing.B) {
			const items = 11
			nodes := benchRoomNodes(b, n)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			var lat []time.Duration
			macro := uint64(0)
			b.ResetTimer()
			for done := 0; done < b.N; macro++ {
				b.StopTimer()
				rooms := joinBenchRoom(b, nodes, macro, items)
				b.StartTimer()
				peerIdx := map[PeerID]int{}
				for i, n := range nodes {
					peerIdx[PeerID(n.host.ID().String())] = i
				}
				owner := 0
				for range items {
					if done == b.N {
						break
					}
					// The owner may pass the queue on to a requester it still
					// has pending, so the requester is chosen from the current
					// owner, and must not hold the queue itself.
					req := (owner + 1) % n
					if o, err := rooms[req].Owner(ctx); err != nil || o == PeerID(nodes[req].host.ID().String()) {
						b.Fatalf("node %d owns the queue before asking (%v)", req, err)
					}
					start := time.Now()
					id, err := rooms[req].Next(ctx)
					if err != nil {
						b.Fatalf("handoff %d: node %d: %v", done, req, err)
					}
					lat = append(lat, time.Since(start))
					done++
					b.StopTimer()
					if err := rooms[req].Complete(ctx, id); err != nil {
						b.Fatal(err)
					}
					o, err := rooms[req].Owner(ctx)
					if err != nil {
						b.Fatal(err)
					}
					owner = peerIdx[o]
					b.StartTimer()
				}
				b.StopTimer()
				for _, r := range rooms {
					r.Close()
				}
				b.StartTimer()
			}
			b.StopTimer()
			slices.Sort(lat)
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
			b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
			b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
		})
	}
}
