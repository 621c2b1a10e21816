package models

import (
	"slices"

	"github.com/jobmesh/jobmesh/dispatch"
)

// Candidate is a live processor of a dispatch view, as the pre-download
// rule reads it.
type Candidate struct {
	// Node is the processor's grade, stake, QoS score and models.
	dispatch.Node
	// Kicked is set when the QoS ledger kicked the processor out: it
	// weighs 0, so it is never named.
	Kicked bool
}

// PreDownloads names, for each model of job that fewer than
// cfg.MinModelHolders of the live processors eligible for the job hold,
// the processors that should fetch it ("Who pre-downloads" in
// docs/PROTOCOL.md): dispatch.PreDownloads over live, drawn from seed.
// Only the job's models count, in-use models do not, and a kicked-out
// processor's QoS is 0. Nodes that hold the same live processors and seed
// name the same processors; the mesh uses the job's public JobInfo seed.
func PreDownloads(cfg dispatch.Config, job dispatch.Job, live []Candidate, seed []byte) ([]dispatch.PreDownload, error) {
	if len(job.Models) == 0 {
		return nil, nil
	}
	nodes := make([]dispatch.Node, len(live))
	for i, c := range live {
		n := c.Node
		// Keeping just the job's models also keeps every node within
		// dispatch's bound on model lists.
		n.LocalModels = slices.DeleteFunc(slices.Clone(n.LocalModels), func(m string) bool { return !slices.Contains(job.Models, m) })
		n.InUseModels = nil
		if c.Kicked {
			n.QoS = 0
		}
		nodes[i] = n
	}
	return dispatch.PreDownloads(cfg, dispatch.Job{ID: job.ID, GPUModel: job.GPUModel, MinVRAM: job.MinVRAM, Models: job.Models}, nodes, seed)
}

// Named lists the models that pds name self to fetch, sorted and
// distinct, without those has reports on disk: what a Fetcher fetches.
func Named(self string, pds []dispatch.PreDownload, has func(model string) bool) []string {
	var out []string
	for _, pd := range pds {
		if slices.Contains(pd.Nodes, self) && !has(pd.Model) {
			out = append(out, pd.Model)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
