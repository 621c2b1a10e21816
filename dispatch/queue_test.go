package dispatch

import (
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"testing"
	"time"
)

// cnx is a token amount with 18 decimals, as in the seed 002 examples.
func cnx(n int64) *big.Int {
	return new(big.Int).Mul(big.NewInt(n), big.NewInt(1_000_000_000_000_000_000))
}

// TestSeed002WorkedExample reproduces both tables of seed 002: 10 CNX for
// one image and 15 CNX for two, first counting only image time (20 s per
// image), then adding the 30 s of non-image time.
func TestSeed002WorkedExample(t *testing.T) {
	one := Job{ID: "one-image", Price: cnx(10), Units: 1}
	two := Job{ID: "two-images", Price: cnx(15), Units: 2}
	imageOnly := DefaultConfig()
	imageOnly.TaskOverhead = 0
	full := DefaultConfig()
	for _, tc := range []struct {
		name    string
		cfg     Config
		job     Job
		est     time.Duration
		value   *big.Rat // CNX per second
		rounded string   // as printed in seed 002
	}{
		{"image time only, 1 image", imageOnly, one, 20 * time.Second, big.NewRat(1, 2), "0.500"},
		{"image time only, 2 images", imageOnly, two, 40 * time.Second, big.NewRat(3, 8), "0.375"},
		{"with non-image time, 1 image", full, one, 50 * time.Second, big.NewRat(1, 5), "0.200"},
		{"with non-image time, 2 images", full, two, 70 * time.Second, big.NewRat(3, 14), "0.214"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			est, err := EstimatedTime(tc.cfg, tc.job.Units)
			if err != nil || est != tc.est {
				t.Fatalf("estimated time %v, %v; want %v", est, err, tc.est)
			}
			v, err := TaskValue(tc.cfg, tc.job)
			if err != nil {
				t.Fatal(err)
			}
			perCNX := new(big.Rat).Quo(v, new(big.Rat).SetInt(cnx(1)))
			if perCNX.Cmp(tc.value) != 0 {
				t.Fatalf("value %s CNX/s, want %s", perCNX.RatString(), tc.value.RatString())
			}
			if got := perCNX.FloatString(3); got != tc.rounded {
				t.Fatalf("printed %s, want %s", got, tc.rounded)
			}
		})
	}
	// The order flips once the overhead counts: the point of seed 002.
	if first, _ := Less(imageOnly, one, two); !first {
		t.Fatal("image time only: the 1-image task must go first")
	}
	if first, _ := Less(full, two, one); !first {
		t.Fatal("with overhead: the 2-image task must go first")
	}
}

func mustQueue(t testing.TB, cfg Config) *Queue {
	t.Helper()
	q, err := NewQueue(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func ids(js []Job) []string {
	out := make([]string, len(js))
	for i, j := range js {
		out[i] = j.ID
	}
	return out
}

func TestQueueOrderAndTies(t *testing.T) {
	q := mustQueue(t, DefaultConfig())
	for _, j := range []Job{
		{ID: "c", Price: big.NewInt(100), Units: 1}, // 100/50
		{ID: "b", Price: big.NewInt(100), Units: 1}, // tie with c: ID decides
		{ID: "a", Price: big.NewInt(140), Units: 2}, // 140/70 = 100/50: tie too
		{ID: "d", Price: big.NewInt(300), Units: 1}, // best
		{ID: "e", Price: big.NewInt(0), Units: 0},   // worst
	} {
		if err := q.Push(j); err != nil {
			t.Fatal(err)
		}
	}
	if got := ids(q.Jobs()); !slices.Equal(got, []string{"d", "a", "b", "c", "e"}) {
		t.Fatalf("order %v", got)
	}
	if err := q.Push(Job{ID: "a", Price: big.NewInt(1)}); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("duplicate: %v", err)
	}
	if err := q.Push(Job{ID: "x", Price: big.NewInt(1), Units: 1 << 62}); !errors.Is(err, ErrInvalidJob) {
		t.Fatalf("overflowing estimate: %v", err)
	}
	if q.Len() != 5 {
		t.Fatalf("a rejected push changed the queue: %d", q.Len())
	}
}

func TestQueueBestAcrossGroups(t *testing.T) {
	q := mustQueue(t, DefaultConfig())
	for _, j := range []Job{
		{ID: "any-8", Price: big.NewInt(100), MinVRAM: 8},
		{ID: "any-24", Price: big.NewInt(500), MinVRAM: 24},
		{ID: "4090-16", Price: big.NewInt(300), MinVRAM: 16, GPUModel: "4090"},
		{ID: "3080-8", Price: big.NewInt(900), MinVRAM: 8, GPUModel: "3080"},
		{ID: "any-16-x3", Price: big.NewInt(1000), MinVRAM: 16, Replicas: 3},
	} {
		if err := q.Push(j); err != nil {
			t.Fatal(err)
		}
	}
	no := func(string, uint64, int) bool { return false }
	yes := func(string, uint64, int) bool { return true }
	for _, tc := range []struct {
		node  Node
		group GroupCheck
		want  string
	}{
		{Node{CardModel: "4090", VRAM: 16}, no, "4090-16"},
		{Node{CardModel: "4090", VRAM: 24}, no, "any-24"},
		{Node{CardModel: "4090", VRAM: 24}, yes, "any-16-x3"},
		{Node{CardModel: "3080", VRAM: 10}, no, "3080-8"},
		{Node{CardModel: "A100", VRAM: 80}, no, "any-24"},
		{Node{CardModel: "1060", VRAM: 6}, yes, ""},
	} {
		j, ok := q.Best(tc.node, tc.group)
		if tc.want == "" {
			if ok {
				t.Errorf("%+v: got %s, want nothing", tc.node, j.ID)
			}
			continue
		}
		if !ok || j.ID != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.node, j.ID, tc.want)
		}
	}
	j, ok := q.Next(Node{CardModel: "4090", VRAM: 24}, no)
	if !ok || j.ID != "any-24" || q.Has("any-24") || q.Len() != 4 {
		t.Fatalf("Next: %v %v len %d", j.ID, ok, q.Len())
	}
}

func TestQueueEvictionAtAlphaN(t *testing.T) {
	cfg := DefaultConfig()
	cfg.QueueAlpha = 2
	cfg.MinQueueLen = 1
	q := mustQueue(t, cfg)
	const live = 3 // cap 6
	if q.Cap(live) != 6 {
		t.Fatalf("cap %d", q.Cap(live))
	}
	var evicted []string
	for i := range 10 {
		// Prices 10, 20, ..., 100 on separate VRAM groups.
		if err := q.Push(Job{ID: fmt.Sprintf("j%02d", i), Price: big.NewInt(int64(10 * (i + 1))), MinVRAM: uint64(i % 3)}); err != nil {
			t.Fatal(err)
		}
		evicted = append(evicted, ids(q.Trim(live))...)
	}
	if !slices.Equal(evicted, []string{"j00", "j01", "j02", "j03"}) {
		t.Fatalf("evicted %v", evicted)
	}
	// A new job worse than everything is itself evicted.
	_ = q.Push(Job{ID: "cheap", Price: big.NewInt(1)})
	if got := ids(q.Trim(live)); !slices.Equal(got, []string{"cheap"}) {
		t.Fatalf("cheap job: evicted %v", got)
	}
	// N drops to 1: cap 2, the four worst go.
	if got := ids(q.Trim(1)); !slices.Equal(got, []string{"j04", "j05", "j06", "j07"}) {
		t.Fatalf("after shrink: evicted %v", got)
	}
	if got := ids(q.Jobs()); !slices.Equal(got, []string{"j09", "j08"}) {
		t.Fatalf("left %v", got)
	}
}

func TestQueueCapFloor(t *testing.T) {
	cfg := DefaultConfig()
	cfg.QueueAlpha = 1.5
	cfg.MinQueueLen = 4
	for live, want := range map[int]int{0: 4, 1: 4, 3: 4, 4: 6, 5: 7, 100: 150} {
		if got := cfg.queueCap(live); got != want {
			t.Errorf("cap(%d) = %d, want %d", live, got, want)
		}
	}
}

// TestQueueHeapsAgainstSort drives random pushes and removals and checks
// every head against a sorted reference.
func TestQueueHeapsAgainstSort(t *testing.T) {
	q := mustQueue(t, DefaultConfig())
	s := NewStream([]byte("heap"))
	ref := map[string]Job{}
	for step := range 3000 {
		if s.Uniform(3) > 0 || len(ref) == 0 {
			j := Job{ID: fmt.Sprintf("j%d", step), Price: big.NewInt(int64(s.Uniform(50))), Units: s.Uniform(4), MinVRAM: s.Uniform(3)}
			if err := q.Push(j); err != nil {
				t.Fatal(err)
			}
			ref[j.ID] = j
		} else {
			all := slices.Sorted(maps.Keys(ref))
			id := all[s.Uniform(uint64(len(all)))]
			if _, ok := q.Remove(id); !ok {
				t.Fatalf("remove %s", id)
			}
			delete(ref, id)
		}
		if step%100 == 0 {
			want := make([]Job, 0, len(ref))
			for _, j := range ref {
				want = append(want, j)
			}
			cfg := DefaultConfig()
			slices.SortFunc(want, func(a, b Job) int {
				if l, _ := Less(cfg, a, b); l {
					return -1
				}
				return 1
			})
			best, ok := q.Best(Node{VRAM: 2}, nil)
			if !ok || best.ID != want[0].ID {
				t.Fatalf("step %d: head %s, want %s", step, best.ID, want[0].ID)
			}
			if w := q.evict.items[0].job.ID; w != want[len(want)-1].ID {
				t.Fatalf("step %d: worst %s, want %s", step, w, want[len(want)-1].ID)
			}
		}
	}
}

func TestGroupLabel(t *testing.T) {
	if g := GroupLabel(Job{MinVRAM: 16384}); g != "16384/Any" {
		t.Fatal(g)
	}
	if g := GroupLabel(Job{MinVRAM: 24576, GPUModel: "RTX 4090", Replicas: 3}); g != "24576/RTX 4090/x3" {
		t.Fatal(g)
	}
}

// TestQueueTrimCountsReplicas: the cap α·N counts processor slots, so a
// job with Replicas 3 takes 3 of them and the worst jobs go until the
// slots fit.
func TestQueueTrimCountsReplicas(t *testing.T) {
	cfg := DefaultConfig()
	cfg.QueueAlpha, cfg.MinQueueLen = 1, 1
	q := mustQueue(t, cfg)
	for _, j := range []Job{
		{ID: "x3", Price: big.NewInt(1000), Replicas: 3},
		{ID: "a", Price: big.NewInt(10)},
		{ID: "b", Price: big.NewInt(20)},
	} {
		if err := q.Push(j); err != nil {
			t.Fatal(err)
		}
	}
	if q.Len() != 3 || q.Slots() != 5 {
		t.Fatalf("len %d slots %d, want 3 jobs in 5 slots", q.Len(), q.Slots())
	}
	if got := ids(q.Trim(5)); len(got) != 0 {
		t.Fatalf("cap 5: evicted %v", got)
	}
	if got := ids(q.Trim(3)); !slices.Equal(got, []string{"a", "b"}) || q.Slots() != 3 {
		t.Fatalf("cap 3: evicted %v, %d slots left", got, q.Slots())
	}
	if got := ids(q.Trim(2)); !slices.Equal(got, []string{"x3"}) || q.Slots() != 0 || q.Len() != 0 {
		t.Fatalf("cap 2: evicted %v, %d slots left", got, q.Slots())
	}
}

// TestQueueNextDrainsInValueOrder follows seed 001's dequeue as the mesh
// runs it (meshview.OrderJobs): a free processor that can serve none of
// the queued jobs takes nothing; one that can serve them takes them one
// after the other, best task value first, across groups.
func TestQueueNextDrainsInValueOrder(t *testing.T) {
	q := mustQueue(t, DefaultConfig())
	for _, j := range []Job{
		{ID: "big2", Price: big.NewInt(5), MinVRAM: 16},
		{ID: "big3", Price: big.NewInt(50), MinVRAM: 16},
		{ID: "only4090", Price: big.NewInt(20), GPUModel: "4090"},
	} {
		if err := q.Push(j); err != nil {
			t.Fatal(err)
		}
	}
	if j, ok := q.Next(Node{ID: "b", CardModel: "3080", VRAM: 10}, nil); ok {
		t.Fatalf("a 3080 with 10 GiB took %s", j.ID)
	}
	var got []string
	for range 4 {
		if j, ok := q.Next(Node{ID: "a", CardModel: "4090", VRAM: 24}, nil); ok {
			got = append(got, j.ID)
		}
	}
	if !slices.Equal(got, []string{"big3", "only4090", "big2"}) {
		t.Fatalf("dequeued %v", got)
	}
}

// TestQueueGroupJobWaits follows seed 000: a replicated job (R = 3) is
// taken only once the processor's card model has 3 free processors for
// it; until then the 1-node jobs behind it are taken, and a processor of
// another card model never completes its group.
func TestQueueGroupJobWaits(t *testing.T) {
	q := mustQueue(t, DefaultConfig())
	for _, j := range []Job{
		{ID: "gpt", Price: big.NewInt(100), MinVRAM: 16, Replicas: 3},
		{ID: "solo", Price: big.NewInt(1), MinVRAM: 16},
	} {
		if err := q.Push(j); err != nil {
			t.Fatal(err)
		}
	}
	free := map[string]int{"A": 2, "B": 1}
	group := func(model string, _ uint64, r int) bool { return free[model] >= r }
	if j, ok := q.Best(Node{ID: "b1", CardModel: "B", VRAM: 24}, group); !ok || j.ID != "solo" {
		t.Fatalf("b1: %v %v, want solo", j.ID, ok)
	}
	if j, ok := q.Best(Node{ID: "a1", CardModel: "A", VRAM: 24}, group); !ok || j.ID != "solo" {
		t.Fatalf("a1 with 2 free A: %v %v, want solo", j.ID, ok)
	}
	free["A"] = 3
	if j, ok := q.Next(Node{ID: "a1", CardModel: "A", VRAM: 24}, group); !ok || j.ID != "gpt" {
		t.Fatalf("a1 with 3 free A: %v %v, want gpt", j.ID, ok)
	}
}
