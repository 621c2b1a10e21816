package jobstore_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt/crdttest"
)

// BenchmarkRoomStoreHeap: the Go heap one open room store holds while
// nothing is written to it (its go-ds-crdt instance, topic, broadcaster,
// caches and buffers): what a node pays per room it is in, beside the
// records. 200 rooms of one job on one replica.
func BenchmarkRoomStoreHeap(b *testing.B) {
	const rooms = 200
	ctx := context.Background()
	for range b.N {
		c := crdttest.New(b, crdttest.Options{Replicas: 1})
		m := managerWith(b, c, 0, &clock{now: time.Unix(1e9, 0)}, withRooms)
		id := jobID("heap")
		if _, err := m.Open(ctx, id); err != nil {
			b.Fatal(err)
		}
		before := heapInUse()
		for macro := range uint64(rooms) {
			if _, err := m.OpenRoom(ctx, id, macro); err != nil {
				b.Fatal(err)
			}
		}
		after := heapInUse()
		b.ReportMetric(float64(after-before)/rooms/1024, "heap-KB/room")
		m.Close()
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}
