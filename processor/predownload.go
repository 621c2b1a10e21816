package processor

import (
	"errors"
	"fmt"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/meshview"
	"github.com/jobmesh/jobmesh/models"
)

// The worker tells a model fetcher what to pre-download.
var _ models.Assigner = (*Worker)(nil)

// Self is this processor's peer ID.
func (w *Worker) Self() string { return w.self }

// PreDownloads are the pre-download names (View.PreDownloads) of every
// open job that needs models, from the latest dispatch view and each
// job's seed; none when there is no view yet or the QoS ledger kicked
// this processor out. A job whose names cannot be derived is left out
// and reported in the joined error.
func (w *Worker) PreDownloads() ([]dispatch.PreDownload, error) {
	v := w.dview.Load()
	if v == nil || v.Kicked(w.self) {
		return nil, nil
	}
	w.mu.Lock()
	var open []*jobState
	for _, js := range w.known {
		if !js.finished && !js.aborted && !js.cancelled && len(js.info.Requirements.ModelCIDs) > 0 {
			open = append(open, js)
		}
	}
	w.mu.Unlock()
	var out []dispatch.PreDownload
	var errs []error
	for _, js := range open {
		pds, err := v.PreDownloads(w.cfg.Dispatch, meshview.DispatchJob(js.info, js.plan()), js.info.SeedCommitment[:])
		if err != nil {
			errs = append(errs, fmt.Errorf("job %s: %w", js.plan().JobID, err))
			continue
		}
		out = append(out, pds...)
	}
	return out, errors.Join(errs...)
}
