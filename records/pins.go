package records

import "github.com/jobmesh/jobmesh/jobs"

// The block layer labels each pin with an owner (ipfs.Store.Pin) and
// releases pins by owner. The owners of a job's pins are named here,
// beside the holder records that announce them: the block layer knows
// no jobs, and every node (the processor that pins, the creator's node
// that keeps or releases, the node that expires a finished job's pins)
// must spell them alike.

// JobPinOwner is the block layer's pin owner of what a node keeps for job
// id while the job runs: its MicroJob results, the assembled output and
// the verdict body on a processor, the job's inputs on its creator's
// node. The node releases these pins when the job is settled (or over).
func JobPinOwner(id jobs.ID) string { return "job:" + id.String() }

// OutputPinOwner is the pin owner of the creator's copy of job id's
// output, kept until someone unpins it.
func OutputPinOwner(id jobs.ID) string { return "output:" + id.String() }

// CandidatePinOwner is the pin owner of the outputs the creator's node
// holds for job id before its verdict (a finalizer's assembly, handed
// off to it); released once the verdict names the output to keep.
func CandidatePinOwner(id jobs.ID) string { return "candidate:" + id.String() }
