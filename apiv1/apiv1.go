package apiv1

import "time"

// JobState is where a job is in its life, as the serving node sees it.
type JobState string

// Job states, in the order a job normally passes through them.
const (
	// JobUnfunded: published, but its escrow is not created yet; with a
	// chain, processors skip it until it is.
	JobUnfunded JobState = "unfunded"
	// JobOpen: funded (or published on a mesh without a chain), no
	// MicroJob committed yet. Only an open job can be cancelled.
	JobOpen JobState = "open"
	// JobRunning: at least one MicroJob committed, no verdict yet.
	JobRunning JobState = "running"
	// JobUndecided: every MicroJob is disclosed and no verdict can follow
	// yet: a disputed or self-checked block's re-runs gave no hash a
	// decisive margin and no re-runner is left to ask (Job.Undecided
	// says which and why). Not terminal: a late re-runner's answer may
	// still decide it, and else the deadline refunds the creator.
	JobUndecided JobState = "undecided"
	// JobVerified: a verdict is in the store; with a chain, the escrow is
	// not released yet.
	JobVerified JobState = "verified"
	// JobSettled: the escrow was released on chain and the serving
	// node holds the verdict (terminal).
	JobSettled JobState = "settled"
	// JobCancelled: aborted by its creator before work started; the
	// escrow is refunded (terminal).
	JobCancelled JobState = "cancelled"
	// JobRefunded: the deadline passed and the escrow went back to the
	// creator (terminal).
	JobRefunded JobState = "refunded"
	// JobFailed: the job cannot run (Job.Failure says why): its code
	// failed the same way on enough processors, or no processor joined
	// it before its deadline. With a chain it is failed once its escrow
	// went back to the creator by a failure settlement or a refund
	// (terminal).
	JobFailed JobState = "failed"
)

// Terminal reports whether no further state follows s.
func (s JobState) Terminal() bool {
	return s == JobSettled || s == JobCancelled || s == JobRefunded || s == JobFailed
}

// JobFailure is why a job failed (state failed).
type JobFailure struct {
	// Kind is how it failed: invalid-module, trap, exit, memory-limit,
	// output-too-large, timeout, or no-eligible-processor.
	Kind string `json:"kind"`
	// Micro is the MicroJob whose runs failed (64 lowercase hex digits);
	// empty for no-eligible-processor.
	Micro string `json:"micro,omitempty"`
	// ExitCode is the module's exit code, for kind exit.
	ExitCode uint32 `json:"exit_code,omitempty"`
	// Reason says it in words.
	Reason string `json:"reason"`
	// Stderr is the start of what the module wrote to stderr (at most
	// 4 KiB), as the lowest reporting processor saw it.
	Stderr string `json:"stderr,omitempty"`
	// Reports are the peer IDs of the processors that reported the
	// failure, sorted; never null.
	Reports []string `json:"reports"`
}

// Job is one job's summary: GET /v1/jobs/{id}, each element of GET
// /v1/jobs, and the payload of each "job" event on GET /v1/events.
type Job struct {
	ID       string    `json:"id"`        // 64 lowercase hex digits
	State    JobState  `json:"state"`     //
	Creator  string    `json:"creator"`   // 0x-address of the creator's wallet
	PriceWei string    `json:"price_wei"` // decimal
	Deadline time.Time `json:"deadline"`  //
	CodeURI  string    `json:"code_uri"`  //
	DataURI  string    `json:"data_uri"`  //
	DataSize uint64    `json:"data_size"`
	// Output is the output assembly kind ("concat" or "png-grid").
	Output    string `json:"output"`
	MacroJobs int    `json:"macrojobs"`
	MicroJobs int    `json:"microjobs"` // verifier MicroJobs included
	Blocks    uint64 `json:"blocks"`
	// Committed and Disclosed count MicroJobs with at least one
	// commitment and one disclosure in the store.
	Committed int `json:"committed"`
	Disclosed int `json:"disclosed"`
	// ByProcessor counts the MicroJobs each processor (peer ID) committed.
	ByProcessor map[string]int `json:"by_processor"`
	// Verdict, once the job has one.
	Verified  bool     `json:"verified"` // every block verified
	Culprits  []string `json:"culprits"` // peer IDs, sorted; never null
	OutputCID string   `json:"output_cid,omitempty"`
	// Undecided are, while the job has no verdict, the blocks whose votes
	// gave no hash a decisive margin (state undecided), by block.
	Undecided []UndecidedBlock `json:"undecided,omitempty"`
	// Holders are the peer IDs of the nodes whose holder record says they
	// hold the whole output, pinned: the processors that assembled it and
	// the creator's node. Once the job has a verdict, only the holders of
	// the output that verdict names. Sorted, never null.
	Holders []string `json:"holders"`
	// VerifierHashes are the accepted verifier MicroJobs' block hashes
	// (lowercase hex) by MacroJob index; VerifierDigest is their digest,
	// the verifier hash the settlement carries on chain.
	VerifierHashes map[uint64][]string `json:"verifier_hashes,omitempty"`
	VerifierDigest string              `json:"verifier_digest,omitempty"`
	// Settlement, once the escrow is released.
	SettlementTx string            `json:"settlement_tx,omitempty"`
	Payouts      map[string]string `json:"payouts,omitempty"` // wallet → wei, decimal
	RefundWei    string            `json:"refund_wei,omitempty"`
	// Failure, in state failed.
	Failure *JobFailure `json:"failure,omitempty"`
	// Mine: this node submitted the job (it announces it and serves its
	// inputs).
	Mine bool `json:"mine"`
	// Updated is when the serving node last saw the job change.
	Updated time.Time `json:"updated"`
}

// UndecidedBlock is a block no vote decided: the re-runs of a dispute
// between two processors' results, or of a self-checked block (a verifier
// block whose regular counterpart one processor ran too), gave no hash
// the margin that names a culprit, and nobody is left to ask.
type UndecidedBlock struct {
	Block uint64 `json:"block"` // global block index
	// Kind is "dispute" or "self-check".
	Kind string `json:"kind"`
	// Sides are the peer IDs of the processors whose results are at
	// stake: a dispute's two, a self-checked block's one.
	Sides []string `json:"sides"`
	// Votes counts the votes by output hash (lowercase hex): each side's
	// and each re-runner's that answered.
	Votes map[string]int `json:"votes"`
	// Reason says why no more re-runs decide it.
	Reason string `json:"reason"`
}

// The kinds of an undecided block.
const (
	UndecidedDispute   = "dispute"    // two processors' results disagree
	UndecidedSelfCheck = "self-check" // one processor ran both the block and its check
)

// Source names job content: a URI (ipfs://, https://, file://, sftp://,
// ws(s)://) and, optionally, its SHA-256; without one the node fetches the
// content once to hash it.
type Source struct {
	URI    string `json:"uri"`
	SHA256 string `json:"sha256,omitempty"` // 64 lowercase hex digits
}

// Slicing mirrors jobs.Slicing; zero counts take the defaults.
type Slicing struct {
	BlockSize      uint64 `json:"block_size"`
	MicroJobs      uint32 `json:"microjobs,omitempty"`        // N, default 10
	BlocksPerMicro uint32 `json:"blocks_per_micro,omitempty"` // K, default 10
	VerifierBlocks uint32 `json:"verifier_blocks,omitempty"`  // K', default min(K, N)
}

// Requirements mirrors jobs.Requirements.
type Requirements struct {
	MinVRAMMiB uint64   `json:"min_vram_mib,omitempty"`
	GPUModel   string   `json:"gpu_model,omitempty"`
	ModelCIDs  []string `json:"model_cids,omitempty"`
	Replicas   uint32   `json:"replicas,omitempty"`
}

// SubmitRequest is the body of POST /v1/jobs.
type SubmitRequest struct {
	Code         Source       `json:"code"`
	Data         Source       `json:"data"`
	Slicing      Slicing      `json:"slicing"`
	PriceWei     string       `json:"price_wei"`         // decimal, > 0
	Deadline     time.Time    `json:"deadline,omitzero"` // default: now + 1h
	Requirements Requirements `json:"requirements,omitzero"`
	Output       string       `json:"output,omitempty"`  // "concat" (default) or "png-grid"
	Columns      uint32       `json:"columns,omitempty"` // png-grid columns
	TaskSize     uint64       `json:"task_size,omitempty"`
	// FetchTimeoutS bounds, in seconds, the node's read of the code and
	// the data named by URI before it publishes; 0: the fetchers' own
	// limit. At most MaxFetchTimeoutS.
	FetchTimeoutS uint32 `json:"fetch_timeout_s,omitempty"`
	// Limits are per-block limits below the processors' own, for a job
	// that needs less; a processor does not take a job asking for more
	// than it allows.
	Limits Limits `json:"limits,omitzero"`
}

// Limits mirrors jobs.Limits; zero fields: the processor's limit.
type Limits struct {
	BlockTimeoutS uint32 `json:"block_timeout_s,omitempty"` // at most 3600
	MemoryMiB     uint32 `json:"memory_mib,omitempty"`      // at most 4096
	OutputMiB     uint32 `json:"output_mib,omitempty"`      // at most 4096
}

// MaxFetchTimeoutS is the most SubmitRequest.FetchTimeoutS may be.
const MaxFetchTimeoutS = 3600

// Content is the answer to POST /v1/content: the uploaded bytes, added to
// the node's block layer.
type Content struct {
	CID    string `json:"cid"`
	URI    string `json:"uri"` // ipfs://CID
	SHA256 string `json:"sha256"`
	Size   uint64 `json:"size"`
}

// Event is one server-sent event of GET /v1/events (event name "job"):
// the job's summary after a change.
type Event struct {
	Kind string `json:"kind"` // "job"
	Job  Job    `json:"job"`
}

// Plan is what a job will be, before it is published: the answer to POST
// /v1/jobs/plan, and the plan part of GET /v1/jobs/{id}/describe.
type Plan struct {
	DataSize  uint64 `json:"data_size"`  // bytes
	BlockSize uint64 `json:"block_size"` // bytes
	Blocks    uint64 `json:"blocks"`
	MacroJobs uint64 `json:"macrojobs"`
	// RegularMicroJobs and VerifierMicroJobs (one per MacroJob) make
	// MicroJobs.
	RegularMicroJobs  uint64 `json:"regular_microjobs"`
	VerifierMicroJobs uint64 `json:"verifier_microjobs"`
	MicroJobs         uint64 `json:"microjobs"`
	// Replicas run each MicroJob; Runs = MicroJobs × Replicas.
	Replicas uint32 `json:"replicas"`
	Runs     uint64 `json:"runs"`
	// PriceWei is the whole price, which the escrow holds; PerRunWei is
	// PriceWei / Runs rounded down, what one MicroJob run earns on average
	// (the settlement splits the price by speed).
	PriceWei  string `json:"price_wei"`
	PerRunWei string `json:"per_run_wei"`
	// Limits are the per-block limits the job asks for, if any.
	Limits Limits `json:"limits,omitzero"`
}
