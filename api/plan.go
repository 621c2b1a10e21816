package api

import (
	"math/big"
	"net/http"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/jobs"
)

// PlanOf is the plan of a job of size bytes of data, sliced by sl, with
// replicas processors per MicroJob and the price: counts after the
// defaults (jobs.ShapeOf), the price per run rounded down.
func PlanOf(size uint64, sl jobs.Slicing, replicas uint32, price *big.Int) apiv1.Plan {
	s := jobs.ShapeOf(size, sl, replicas)
	if replicas == 0 {
		replicas = jobs.DefaultReplicas
	}
	p := apiv1.Plan{
		DataSize: size, BlockSize: sl.BlockSize, Blocks: s.Blocks, MacroJobs: s.MacroJobs,
		RegularMicroJobs: s.Regular, VerifierMicroJobs: s.Verifiers, MicroJobs: s.MicroJobs(),
		Replicas: replicas, Runs: s.Runs, PriceWei: "0", PerRunWei: "0",
	}
	if price != nil {
		p.PriceWei = price.String()
		if s.Runs > 0 {
			p.PerRunWei = new(big.Int).Div(price, new(big.Int).SetUint64(s.Runs)).String()
		}
	}
	return p
}

// plan answers POST /v1/jobs/plan: the request of POST /v1/jobs checked
// as for a submission (fields, a runnable module, the data read to size
// it) and the plan it would make. Nothing is published or funded.
func (s *submitter) plan(w http.ResponseWriter, r *http.Request) {
	_, spec, ok := s.prepare(w, r)
	if !ok {
		return
	}
	p := PlanOf(spec.Data.Size, spec.Slicing, spec.Requirements.Replicas, spec.Price)
	p.Limits = apiv1.Limits{BlockTimeoutS: spec.Limits.BlockTimeoutS, MemoryMiB: spec.Limits.MemoryMiB, OutputMiB: spec.Limits.OutputMiB}
	writeJSON(w, http.StatusOK, p)
}
