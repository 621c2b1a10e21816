package processor

import (
	"slices"
	"testing"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/meshview"
)

// TestWorkerPreDownloads: the worker names, for its open jobs that need
// models, the processors its view draws to fetch them; a job without
// models, a finished job, no view or a kicked-out self name nothing.
func TestWorkerPreDownloads(t *testing.T) {
	const model = "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"
	var ads []meshview.Advertised
	for _, id := range []string{"p0", "p1", "p2"} {
		ads = append(ads, meshview.Advertised{PeerID: id})
	}
	w := &Worker{self: "p1", cfg: DefaultConfig(), known: map[jobs.ID]*jobState{}}
	if pds, err := w.PreDownloads(); err != nil || pds != nil {
		t.Fatalf("without a view: %+v, %v", pds, err)
	}
	js := modelJob(t, model)
	w.known[js.plan().JobID] = js
	w.known[modelJob(t).plan().JobID] = modelJob(t) // no models: nothing to fetch
	done := modelJob(t, "bafkreibm6jg3ux5qumhcn2b3flc3tyu6dmlb4xa7u5bf44yegnrjhc4yeq")
	done.finished = true
	w.known[done.plan().JobID] = done
	w.dview.Store(modelView(t, ads))
	// Three processors, none holds the model: all three are named.
	pds, err := w.PreDownloads()
	if err != nil || len(pds) != 1 || pds[0].Model != model || !slices.Equal(pds[0].Nodes, []string{"p0", "p1", "p2"}) {
		t.Fatalf("pre-downloads %+v, %v", pds, err)
	}
	if w.Self() != "p1" {
		t.Fatalf("self %q", w.Self())
	}
	// A kicked-out processor fetches nothing.
	w.dview.Store(modelView(t, ads, "p1"))
	if pds, err := w.PreDownloads(); err != nil || len(pds) != 0 {
		t.Fatalf("kicked out: %+v, %v", pds, err)
	}
}
