package meshview

import (
	"crypto/sha256"
	"math/big"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
)

// openJob is a job as a processor keeps it.
type openJob struct {
	info *jobs.JobInfo
	plan *jobs.Plan
}

// orderJobs is OrderJobs over open jobs, with no replicated group
// servable.
func orderJobs(cfg dispatch.Config, self dispatch.Node, list []*openJob) []*openJob {
	return orderJobsIn(cfg, nil, self, list)
}

// orderJobsIn is OrderJobs over open jobs with v's GroupCheck.
func orderJobsIn(cfg dispatch.Config, v *View, self dispatch.Node, list []*openJob) []*openJob {
	return OrderJobs(cfg, self, v.GroupCheck(), list, func(j *openJob) (*jobs.JobInfo, *jobs.Plan) { return j.info, j.plan })
}

// orderFixture is a job with a price in wei, a task size (0: use blocks)
// and requirements.
func orderFixture(name string, price int64, taskSize, blocks uint64, vram uint64, model string) *openJob {
	return &openJob{
		info: &jobs.JobInfo{PriceWei: big.NewInt(price), TaskSize: taskSize, Requirements: jobs.Requirements{MinVRAMMiB: vram, GPUModel: model}},
		plan: &jobs.Plan{JobID: sha256.Sum256([]byte(name)), NumBlocks: blocks},
	}
}

func orderNames(list []*openJob, names map[jobs.ID]string) []string {
	out := make([]string, len(list))
	for i, js := range list {
		out[i] = names[js.plan.JobID]
	}
	return out
}

// TestOrderJobs checks the job order: task value (price over estimated
// time from TaskSize, or blocks), only the groups the processor serves,
// and the same order whatever order the jobs are listed in.
func TestOrderJobs(t *testing.T) {
	cfg := dispatch.DefaultConfig() // 30s overhead + 20s per unit
	all := map[string]*openJob{
		// 100/(30+20·1)=2 per s
		"cheap-small": orderFixture("cheap-small", 100, 1, 99, 0, ""),
		// 1000/(30+20·10)≈4.35 per s: blocks count when TaskSize is 0
		"rich-blocks": orderFixture("rich-blocks", 1000, 0, 10, 0, ""),
		// 1000/(30+20·100)≈0.49 per s
		"rich-huge": orderFixture("rich-huge", 1000, 100, 1, 0, ""),
		// best value, but needs a 4090
		"needs-4090": orderFixture("needs-4090", 1_000_000, 1, 1, 0, "RTX 4090"),
		// good value, needs 24 GiB
		"needs-vram": orderFixture("needs-vram", 10_000, 1, 1, 24576, ""),
	}
	names := map[jobs.ID]string{}
	for n, js := range all {
		names[js.plan.JobID] = n
	}
	cases := []struct {
		node dispatch.Node
		want []string
	}{
		{dispatch.Node{ID: "cpu", CardModel: "cpu"}, []string{"rich-blocks", "cheap-small", "rich-huge"}},
		{dispatch.Node{ID: "4090", CardModel: "RTX 4090", VRAM: 24576}, []string{"needs-4090", "needs-vram", "rich-blocks", "cheap-small", "rich-huge"}},
		{dispatch.Node{ID: "3080", CardModel: "RTX 3080", VRAM: 10240}, []string{"rich-blocks", "cheap-small", "rich-huge"}},
	}
	for _, c := range cases {
		t.Run(c.node.ID, func(t *testing.T) {
			var list []*openJob
			for _, js := range all { // map order: the result must not depend on it
				list = append(list, js)
			}
			for range 5 {
				got := orderNames(orderJobs(cfg, c.node, list), names)
				if len(got) != len(c.want) {
					t.Fatalf("order %v, want %v", got, c.want)
				}
				for i := range got {
					if got[i] != c.want[i] {
						t.Fatalf("order %v, want %v", got, c.want)
					}
				}
				list = append(list[1:], list[0])
			}
		})
	}
}

// TestOrderJobsOverflow: a job whose estimated time overflows is not lost;
// it comes after every job with a value.
func TestOrderJobsOverflow(t *testing.T) {
	cfg := dispatch.DefaultConfig()
	cfg.UnitTime = time.Hour
	big := orderFixture("overflow", 1, jobs.MaxTaskSize, 1, 0, "")
	ok := orderFixture("ok", 1, 1, 1, 0, "")
	got := orderJobs(cfg, dispatch.Node{ID: "n", CardModel: "cpu"}, []*openJob{big, ok})
	if len(got) != 2 || got[0] != ok || got[1] != big {
		t.Fatalf("got %d jobs, want ok then overflow", len(got))
	}
}

// BenchmarkOrderJobs is the worker's job order over 10,000 known jobs in
// 20 groups: what every work step pays to pick its next job.
func BenchmarkOrderJobs(b *testing.B) {
	cfg := dispatch.DefaultConfig()
	models := []string{"", "RTX 4090", "A100", "cpu"}
	var list []*openJob
	for i := range 10_000 {
		list = append(list, orderFixture(strconv.Itoa(i), int64(1_000+i*7919%100_000), uint64(1+i%50), 1, uint64(i%5)*4096, models[i%len(models)]))
	}
	self := dispatch.Node{ID: "self", CardModel: "RTX 4090", VRAM: 24576}
	b.ReportAllocs()
	for b.Loop() {
		if got := orderJobs(cfg, self, list); len(got) == 0 {
			b.Fatal("no job")
		}
	}
}

// TestOrderJobsCapsReplicas: a job asking for more replicas than the
// mesh's MaxReplicas is not taken; one within it is.
func TestOrderJobsCapsReplicas(t *testing.T) {
	cfg := dispatch.DefaultConfig()
	ok := orderFixture("ok", 100, 0, 10, 0, "")
	ok.info.Requirements.Replicas = uint32(cfg.MaxReplicas)
	tooMany := orderFixture("too-many", 1000, 0, 10, 0, "")
	tooMany.info.Requirements.Replicas = uint32(cfg.MaxReplicas + 1)
	v := cardView(t, "cpu", "cpu", "cpu")
	got := orderJobsIn(cfg, v, dispatch.Node{ID: "p0", CardModel: "cpu"}, []*openJob{tooMany, ok})
	if len(got) != 1 || got[0] != ok {
		t.Fatalf("took %d jobs; want only the one within MaxReplicas", len(got))
	}
}

// cardView is a view of live processors p0, p1, ... with the given card
// models (24 GiB each); those named in kicked are kicked out.
func cardView(t *testing.T, models ...string) *View {
	t.Helper()
	return cardViewKicked(t, models, nil)
}

func cardViewKicked(t *testing.T, models []string, kicked []string) *View {
	t.Helper()
	ads := make([]Advertised, len(models))
	for i, m := range models {
		ads[i] = Advertised{PeerID: "p" + strconv.Itoa(i), CardModel: m, VRAMMiB: 24576}
	}
	return modelView(t, ads, kicked...)
}

// TestOrderJobsReplicas: a replicated job (R = 3) is in a queue group of
// its own and is taken, by task value against the other groups' heads
// (seed 001), only while self's card model has 3 processors that weigh
// more than 0 (seed 000); otherwise the 1-node jobs are taken and it
// waits.
func TestOrderJobsReplicas(t *testing.T) {
	cfg := dispatch.DefaultConfig()
	x3 := orderFixture("x3", 1_000_000, 1, 1, 0, "")
	x3.info.Requirements.Replicas = 3
	x3gpu := orderFixture("x3-4090", 10_000_000, 1, 1, 16384, "RTX 4090")
	x3gpu.info.Requirements.Replicas = 3
	single := orderFixture("single", 1000, 1, 1, 0, "")
	cheap := orderFixture("cheap", 10, 1, 1, 0, "")
	names := map[jobs.ID]string{}
	for n, js := range map[string]*openJob{"x3": x3, "x3-4090": x3gpu, "single": single, "cheap": cheap} {
		names[js.plan.JobID] = n
	}
	four := []string{"RTX 4090", "RTX 4090", "RTX 4090", "A100", "A100"}
	cases := []struct {
		name   string
		models []string
		kicked []string
		self   dispatch.Node
		want   []string
	}{
		{"two of self's model", []string{"RTX 4090", "RTX 4090", "A100", "A100", "A100"}, nil,
			dispatch.Node{ID: "p0", CardModel: "RTX 4090", VRAM: 24576}, []string{"single", "cheap"}},
		{"three of self's model", four, nil,
			dispatch.Node{ID: "p0", CardModel: "RTX 4090", VRAM: 24576}, []string{"x3-4090", "x3", "single", "cheap"}},
		{"a kicked one does not count", four, []string{"p2"},
			dispatch.Node{ID: "p0", CardModel: "RTX 4090", VRAM: 24576}, []string{"single", "cheap"}},
		{"the other model has two", four, nil,
			dispatch.Node{ID: "p3", CardModel: "A100", VRAM: 24576}, []string{"single", "cheap"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := cardViewKicked(t, c.models, c.kicked)
			list := []*openJob{cheap, x3, single, x3gpu}
			for range len(list) {
				got := orderNames(orderJobsIn(cfg, v, c.self, list), names)
				if !slices.Equal(got, c.want) {
					t.Fatalf("order %v, want %v", got, c.want)
				}
				list = append(list[1:], list[0])
			}
		})
	}
}
