package processor_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/processor"
)

// TestModelPreDownloadInMesh: a job needs a model (content the client
// added to its IPFS) that one of four processors holds. Fewer than three
// hold it, so the processors every node names (from its view and the
// job's seed) fetch it by CID into their model stores and advertise it;
// the MicroJobs are held until three processors advertise the model,
// and the job then completes with the right output.
func TestModelPreDownloadInMesh(t *testing.T) {
	release := make(chan struct{})
	m := flowMeshWith(t, localmesh.Options{Processors: 4}, func(_ *localmesh.Member, pc *processor.Config) {
		pc.FactsEvery = 300 * time.Millisecond
		pc.Hold = holdUntil(release, nil)
	})
	ctx := t.Context()
	c := client(m)
	procs := m.Members[1 : len(m.Members)-1]

	model := bytes.Repeat([]byte("jobmesh test model weights\n"), 20_000) // 540 kB: several blocks
	mc, err := c.IPFS.AddFile(ctx, bytes.NewReader(model))
	if err != nil {
		t.Fatal(err)
	}
	cid := mc.String()
	holder := procs[0]
	fctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := holder.FetchModel(fctx, cid); err != nil {
		t.Fatalf("holder fetching the model: %v", err)
	}
	// Every processor's view lists all four, the holder with the model,
	// before the job appears: then they all name the same fetchers.
	waitModelInViews(t, procs, holder, cid)

	job := newMandelbrot(t, 128, 128, 32) // 16 tiles
	spec := job.spec(2, 4)
	spec.Requirements = jobs.Requirements{ModelCIDs: []string{cid}}
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	info, err := c.DApp.Submit(sctx, spec)
	if err != nil {
		t.Fatal(err)
	}

	// The named processors fetch the model and advertise it.
	holders := waitModelAdvertised(t, ctx, c, cid, 3)
	if fetched := checkModelFiles(t, procs, holder, holders, cid, model); fetched < 2 {
		t.Fatalf("%d processors pre-downloaded the model, want at least 2", fetched)
	}
	// The job was not held up by the pre-download for good: it completes.
	close(release)
	jctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	res, err := c.DApp.Wait(jctx, info.ID(), 100*time.Millisecond)
	if err != nil {
		t.Fatalf("job %s: %v", info.ID(), err)
	}
	checkComplete(t, info, res)
	if got := output(t, m, res, info.Output.Kind); !bytes.Equal(got, job.Local(t)) {
		t.Fatal("mesh output differs from the local run")
	}
}

// waitModelInViews waits until every processor's view lists every
// processor live and the holder with model cid.
func waitModelInViews(t *testing.T, procs []*localmesh.Member, holder *localmesh.Member, cid string) {
	t.Helper()
	wait.Until(t, time.Minute, func() error {
		for _, p := range procs {
			v := p.Worker.View()
			if v.Live() != len(procs) {
				return fmt.Errorf("processor %d sees %d live", p.Index, v.Live())
			}
			if h, _ := v.Processor(holder.Host.ID().String()); !slices.Contains(h.LocalModels, cid) {
				return fmt.Errorf("processor %d does not see the holder's model yet", p.Index)
			}
		}
		return nil
	})
}

// waitModelAdvertised waits until at least want processors advertise model
// cid to the client and returns their peer IDs.
func waitModelAdvertised(t *testing.T, ctx context.Context, c *localmesh.Member, cid string, want int) []string {
	t.Helper()
	var holders []string
	wait.Until(t, 2*time.Minute, func() error {
		ads, err := c.Processors(ctx)
		if err != nil {
			return err
		}
		holders = holders[:0]
		for _, a := range ads {
			if slices.Contains(a.Models, cid) {
				holders = append(holders, a.PeerID)
			}
		}
		if len(holders) < want {
			return fmt.Errorf("%d processors advertise the model", len(holders))
		}
		return nil
	})
	return holders
}

// checkModelFiles checks that every processor among holders has the model
// in its model store and, unless it is the first holder, counted a fetch;
// it returns how many fetched it.
func checkModelFiles(t *testing.T, procs []*localmesh.Member, holder *localmesh.Member, holders []string, cid string, model []byte) int {
	t.Helper()
	fetched := 0
	for _, p := range procs {
		if !slices.Contains(holders, p.Host.ID().String()) {
			continue
		}
		path, err := p.Models.Path(cid)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, model) {
			t.Fatalf("processor %d's model file: %d bytes, %v", p.Index, len(got), err)
		}
		if p != holder {
			fetched++
			if n := counter(t, p, "jobmesh_models_fetched_total"); n < 1 {
				t.Fatalf("processor %d advertises the model but counted %v fetches", p.Index, n)
			}
		}
	}
	return fetched
}

// counter reads a counter's value from a member's metrics registry.
func counter(t *testing.T, mem *localmesh.Member, name string) float64 {
	t.Helper()
	return counterWith(t, mem, name, "", "")
}

// counterWith is counter over the series whose label is value (every
// series when label is "").
func counterWith(t *testing.T, mem *localmesh.Member, name, label, value string) float64 {
	t.Helper()
	mfs, err := mem.Metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label == "" || slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool { return l.GetName() == label && l.GetValue() == value }) {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}
