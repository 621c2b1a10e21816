package apiv1

import "time"

// MicroJob states in a JobDescription, from the first to the last a
// MicroJob reaches.
const (
	MicroPending   = "pending"   // no processor committed it yet
	MicroCommitted = "committed" // a processor committed its result hashes
	MicroDisclosed = "disclosed" // a processor disclosed its results
	MicroChecked   = "checked"   // a block of it was checked or disputed
	MicroRedo      = "redo"      // a redo of it was ordered
)

// JobDescription is everything the serving node knows of one job: GET
// /v1/jobs/{id}/describe.
type JobDescription struct {
	// Job is the summary (GET /v1/jobs/{id}), with the state, verdict and
	// settlement (tx, payouts, refund).
	Job  Job  `json:"job"`
	Plan Plan `json:"plan"`
	// ChecksDrawn: the creator has revealed its check seed, so the
	// verifier MicroJobs (Verifier true) are known; before, MacroJobs
	// list their regular MicroJobs only.
	ChecksDrawn bool           `json:"checks_drawn"`
	MacroJobs   []MacroJobInfo `json:"macrojobs"`
	// MicroJobsLeftOut counts MicroJobs not listed: a description lists at
	// most MaxDescribedMicroJobs.
	MicroJobsLeftOut int `json:"microjobs_left_out,omitempty"`
	// Processors maps each processor (peer ID) that committed a MicroJob
	// to the IDs of the MicroJobs it committed, sorted.
	Processors map[string][]string `json:"processors"`
	// Events are the job's records in the order they were written, the
	// newest MaxDescribedEvents; EventsLeftOut counts older ones not
	// listed.
	Events        []JobEvent `json:"events"`
	EventsLeftOut int        `json:"events_left_out,omitempty"`
	// Errors say, one line each, what went wrong: undecided blocks,
	// culprits, disputes and redos. Never null.
	Errors []string `json:"errors"`
}

// The most MicroJobs and events one JobDescription lists.
const (
	MaxDescribedMicroJobs = 4096
	MaxDescribedEvents    = 2048
)

// MacroJobInfo is one MacroJob of a JobDescription.
type MacroJobInfo struct {
	Index     uint64         `json:"index"`
	ID        string         `json:"id"`
	MicroJobs []MicroJobInfo `json:"microjobs"`
}

// MicroJobInfo is one MicroJob of a JobDescription.
type MicroJobInfo struct {
	ID       string   `json:"id"`
	Slot     int      `json:"slot"`
	Verifier bool     `json:"verifier"`
	Blocks   []uint64 `json:"blocks"` // global block indices, ascending
	// State is the furthest it reached (MicroPending ... MicroRedo).
	State string `json:"state"`
	// Committed and Disclosed are the processors (peer IDs, sorted) that
	// committed and disclosed it.
	Committed []string `json:"committed"`
	Disclosed []string `json:"disclosed"`
}

// JobEvent is one record of a job, as written to the replicated store.
type JobEvent struct {
	Time time.Time `json:"time"` // the author's write time
	// Type is the record type: job, commit, result, check, dispute,
	// rerun, redo, reveal, verdict, holder, settlement, settled, cancel, ...
	Type string `json:"type"`
	Peer string `json:"peer,omitempty"` // the author
	Text string `json:"text"`           // one line that says what happened
}
