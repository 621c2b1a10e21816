package apiv1

import "time"

// Operator is the answer to GET /v1/operator: what the serving node does
// and costs, for the person running it.
type Operator struct {
	Role          string  `json:"role"`
	UptimeSeconds float64 `json:"uptime_s"`
	// MicroJobs this node ran and committed, and runs that failed; both
	// zero on a node that processes nothing.
	MicroJobsCommitted uint64 `json:"microjobs_committed"`
	MicroJobsFailed    uint64 `json:"microjobs_failed"`
	// Earnings of the node's wallet on the escrow, as last read from the
	// chain; nil without a chain or before the first read.
	Earnings *Earnings `json:"earnings"`
	// CPUSeconds is the CPU time (user and system) the process has used;
	// -1 where it cannot be read. MemoryBytes is the memory the Go
	// runtime has mapped from the system; HeapBytes the heap in use.
	CPUSeconds  float64 `json:"cpu_s"`
	CPUs        int     `json:"cpus"`
	MemoryBytes uint64  `json:"memory_bytes"`
	HeapBytes   uint64  `json:"heap_bytes"`
	Goroutines  int     `json:"goroutines"`
	// Warnings are the node's latest log records at WARN and above,
	// oldest first.
	Warnings []LogRecord `json:"warnings"`
}

// Earnings is a wallet's money on the escrow, in wei as decimal strings.
type Earnings struct {
	Wallet string `json:"wallet"`
	// CreditedWei is everything the escrow credited the wallet: payouts
	// and refunds, withdrawn or not.
	CreditedWei string `json:"credited_wei"`
	// WithdrawnWei is what the wallet has withdrawn; CreditWei what it
	// may still withdraw.
	WithdrawnWei string    `json:"withdrawn_wei"`
	CreditWei    string    `json:"credit_wei"`
	ReadAt       time.Time `json:"read_at"`
}

// LogRecord is one log record: its time, level (WARN, ERROR), message and
// attributes, each value at most 512 bytes.
type LogRecord struct {
	Time    time.Time         `json:"time"`
	Level   string            `json:"level"`
	Message string            `json:"message"`
	Attrs   map[string]string `json:"attrs,omitempty"`
}
