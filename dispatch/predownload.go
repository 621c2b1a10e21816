package dispatch

import "fmt"

// HoldsModels reports whether n has every model job needs on its disk
// (true when the job needs none): the test by which model locality
// narrows a candidate pool (seed 001).
func HoldsModels(job Job, n Node) bool {
	req := uniq(job.Models)
	if len(req) == 0 {
		return true
	}
	return countHeld(req, toSet(n.LocalModels)) == len(req)
}

// PreDownloads names, for each model job needs that fewer than
// cfg.MinModelHolders of the nodes eligible for job hold, that many others
// (fewer when not enough weigh above 0) to fetch it: the pool's
// pre-download rule of Select over nodes, busy or free alike. Each model's
// draw is by W with M = 1, S normalised over the eligible non-holders,
// from Seed(seed, "predownload", model); models are taken in byte order.
// Every node holding the same nodes and seed names the same processors.
func PreDownloads(cfg Config, job Job, nodes []Node, seed []byte) ([]PreDownload, error) {
	p, err := NewPool(cfg)
	if err != nil {
		return nil, err
	}
	if len(job.Models) > MaxModels {
		return nil, fmt.Errorf("%w %s: more than %d models", ErrInvalidJob, job.ID, MaxModels)
	}
	for _, n := range nodes {
		if err := p.Add(n, false); err != nil {
			return nil, err
		}
	}
	return p.preDownload(uniq(job.Models), p.eligibleGroups(job), seed), nil
}
