package processor

import "github.com/jobmesh/jobmesh/microjob"

// overLimits reports whether job js asks for more per block than this
// processor's sandbox allows ([processor] block_timeout,
// max_job_memory_mib, max_block_output_mib): it does not take such a job,
// and says so once.
func (w *Worker) overLimits(js *jobState) bool {
	if !microjob.Exceeds(js.info, w.cfg.Wasm) {
		return false
	}
	if !js.overLimitsSaid {
		js.overLimitsSaid = true
		w.log.Warn("job asks for more per block than this processor allows: not taken", "job", js.plan().JobID,
			"job_limits", js.info.Limits.String(), "block_timeout", w.cfg.Wasm.Timeout,
			"memory_bytes", w.cfg.Wasm.MemoryLimitBytes, "output_bytes", w.cfg.Wasm.MaxOutputBytes)
	}
	return true
}
