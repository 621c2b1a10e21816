package apiv1

import "time"

// DispatchNodes is the body of GET /v1/dispatch/nodes: the live
// processors as dispatching weighs them.
type DispatchNodes struct {
	// Live is the number of live processors (fresh advertisement).
	Live int `json:"live"`
	// Tasks is how many finished tasks the QoS ledger replayed.
	Tasks int `json:"tasks"`
	// TimeoutWindow is how many recent tasks of a processor its
	// Timeouts count.
	TimeoutWindow int `json:"timeout_window"`
	// Processors are sorted by peer ID.
	Processors []DispatchNode `json:"processors"`
}

// DispatchNode is one live processor's grade, stake, QoS and weight.
type DispatchNode struct {
	PeerID    string `json:"peer_id"`
	CardModel string `json:"card_model"`
	VRAMMiB   uint64 `json:"vram_mib"`
	Wallet    string `json:"wallet"`
	// StakeWei is the active stake read from the escrow (decimal); "1"
	// on a mesh without a chain.
	StakeWei string `json:"stake_wei"`
	// QoS is the combined score Q; VRAMScore, TimeoutScore and
	// SpeedScore its parts R, P and B, all in [0, 1].
	QoS          float64 `json:"qos"`
	VRAMScore    float64 `json:"vram_score"`
	TimeoutScore float64 `json:"timeout_score"`
	SpeedScore   float64 `json:"speed_score"`
	// Weight is the selection weight W = S·Q/(S+Q); 0 when kicked out.
	Weight float64 `json:"weight"`
	// Kicked is the kick-out reason ("timeouts", "low-score"), or "".
	Kicked string `json:"kicked,omitempty"`
	// KickedAt is when the kick took effect: the verdict time of the job
	// whose outcome triggered it. Absent when not kicked.
	KickedAt *time.Time `json:"kicked_at,omitempty"`
	// Timeouts is how many of its last TimeoutWindow tasks timed out.
	Timeouts int `json:"timeouts"`
	// SpeedAt is when its latest scored task (a job's or a probe's)
	// ended; absent while its speed score is the new-node score.
	SpeedAt *time.Time `json:"speed_at,omitempty"`
}

// Queue is the body of GET /v1/queue: the open jobs in their dispatch
// groups.
type Queue struct {
	// Live is the number of live processors; Cap the most not-started
	// jobs the queue holds before the lowest-value ones are aborted.
	Live int `json:"live"`
	Cap  int `json:"cap"`
	// Groups are the queue groups, the one with the best head first.
	Groups []QueueGroup `json:"groups"`
}

// QueueGroup is one group of open jobs, e.g. "0/Any" or "24576/RTX 4090",
// best job first.
type QueueGroup struct {
	Label string     `json:"label"`
	Jobs  []QueueJob `json:"jobs"`
}

// QueueJob is one open job and its task value.
type QueueJob struct {
	ID       string `json:"id"`
	PriceWei string `json:"price_wei"` // decimal
	// Value is the task value, price over estimated time, in wei per
	// second (decimal with 6 places); "" when it cannot be computed.
	Value string `json:"value"`
	// EstimatedSeconds is the estimated execution time.
	EstimatedSeconds float64 `json:"estimated_seconds"`
	// Started: a MicroJob is committed, so the job no longer counts
	// against the cap.
	Started bool `json:"started"`
}
