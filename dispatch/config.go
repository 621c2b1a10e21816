package dispatch

import (
	"fmt"
	"math"
	"time"
)

// Config holds the network parameters of dispatching, pricing and QoS. Every
// node of a mesh must use the same values, or their decisions diverge.
type Config struct {
	// TaskOverhead is the fixed part of a job's estimated execution time:
	// fetching arguments, preparing models, waiting for verification and
	// uploading the result. Default 30s (seed 002: "non-image time" of the
	// worked example).
	TaskOverhead time.Duration
	// UnitTime is the estimated time of one unit of work (one image in seed
	// 002, one block here). Default 20s (seed 002: "image time" of one image).
	UnitTime time.Duration

	// QueueAlpha is α in the queue cap S = α·N, N the number of live
	// processors. Default 10 (a jobmesh choice; seeds 000/001 leave α a
	// network parameter without a published value).
	QueueAlpha float64
	// MinQueueLen is the smallest queue cap, so a mesh with few or no live
	// processors still holds some jobs. Default 64 (a jobmesh choice).
	MinQueueLen int

	// MinModelHolders is how many live eligible processors should hold each
	// required model; below it, others are asked to pre-download it. Default 3
	// (seed 001, model pre-download).
	MinModelHolders int
	// MaxReplicas is the largest number of processors a job may ask for on
	// one card model. Default 3 (seed 000: GPT tasks on 3 nodes of one card
	// model).
	MaxReplicas int

	// RoundScores are the points for the 1st, 2nd, 3rd... submission in a
	// commitment or disclosure round; later positions get 0. Default
	// [10 5 2] (Crynux relay TASK_SCORE_REWARDS; seed 003 gives only the
	// shape, earlier on-chain versions used [10 9 6]).
	RoundScores []uint32
	// FeeBasePoints is the floor of a credited result's fee weight: a
	// result earns max(ts, floor) with floor = min(FeeBasePoints,
	// 2·RoundScores[last]), the task score of the last place the table
	// scores in both rounds (see SpeedFeeWeights). The cap keeps a task
	// whose submitters all score in the table split exactly by their task
	// scores (seed 003); the floor pays honest work past the table's last
	// place, as much as that place. Default 4, the cap with the default
	// RoundScores. 0 pays by task score alone.
	FeeBasePoints uint32
	// ScoreWindow is how many recent scored tasks the node score averages
	// over. Default 50 (Crynux relay NODE_QOS_SCORE_POOL_SIZE; seed 003 says
	// "a time window").
	ScoreWindow int
	// NewNodeTaskScore is the node score of a processor without a scored
	// task yet. Default 10, half the best task score with the default
	// RoundScores (the Crynux relay gives a new node half the top score).
	NewNodeTaskScore uint32
	// SpeedWeight, VRAMWeight and TimeoutWeight combine the submission
	// speed score B, the VRAM score R and the timeout score P into the QoS
	// score Q = (wB·B + wR·R + wP·P)/(wB+wR+wP). Defaults 2, 1, 1 (seed 003
	// names a weighted sum without weights; jobmesh counts speed double
	// because seed 003 penalises selection by it).
	SpeedWeight, VRAMWeight, TimeoutWeight uint32
	// MinTimeout is O_min, the shortest timeout setting the network
	// allows, used by the timeout score. Default 60s (a jobmesh choice).
	MinTimeout time.Duration

	// KickTimeoutWindow and KickTimeouts: a processor is kicked out when at
	// least KickTimeouts of its last KickTimeoutWindow tasks timed out.
	// Defaults 3 and 2 (Crynux relay: "2 tasks timeout in recent 3 tasks").
	KickTimeoutWindow, KickTimeouts int
	// KickScoreWindow is how many recent tasks the short-term mean task
	// score covers. Default 10 (a jobmesh choice).
	KickScoreWindow int
	// KickScoreThreshold: a short-term mean task score strictly below this
	// many points counts as a low score. Default 3 of the best 20 (a jobmesh
	// choice: a processor that is always last in both rounds of a 3-node
	// task scores 4 and is never kicked for being slow alone).
	KickScoreThreshold uint32
	// KickLowStreak is how many consecutive tasks the short-term mean must
	// stay low before the processor is kicked out. Default 3 (Crynux
	// contract TASK_SCORE_POOL_SIZE).
	KickLowStreak int

	// FailReports is F, how many distinct processors must report the same
	// deterministic failure of a job (the same MicroJob, the same kind)
	// before the mesh deems the job failed; a processor signs its failure
	// settlement only once its own run failed the same way too. Default 2;
	// 1 fits a one-processor mesh only.
	FailReports int
}

// DefaultConfig returns the parameters documented on Config.
func DefaultConfig() Config {
	return Config{
		TaskOverhead:       30 * time.Second,
		UnitTime:           20 * time.Second,
		QueueAlpha:         10,
		MinQueueLen:        64,
		MinModelHolders:    3,
		MaxReplicas:        3,
		RoundScores:        []uint32{10, 5, 2},
		FeeBasePoints:      4,
		ScoreWindow:        50,
		NewNodeTaskScore:   10,
		SpeedWeight:        2,
		VRAMWeight:         1,
		TimeoutWeight:      1,
		MinTimeout:         60 * time.Second,
		KickTimeoutWindow:  3,
		KickTimeouts:       2,
		KickScoreWindow:    10,
		KickScoreThreshold: 3,
		KickLowStreak:      3,
		FailReports:        2,
	}
}

// Validate reports the first parameter that is out of range.
func (c Config) Validate() error {
	switch {
	case c.TaskOverhead < 0:
		return fmt.Errorf("%w: TaskOverhead %v is negative", ErrConfig, c.TaskOverhead)
	case c.UnitTime < 0:
		return fmt.Errorf("%w: UnitTime %v is negative", ErrConfig, c.UnitTime)
	case c.TaskOverhead == 0 && c.UnitTime == 0:
		return fmt.Errorf("%w: TaskOverhead and UnitTime are both zero", ErrConfig)
	case math.IsNaN(c.QueueAlpha) || math.IsInf(c.QueueAlpha, 0) || c.QueueAlpha <= 0:
		return fmt.Errorf("%w: QueueAlpha %v must be a positive number", ErrConfig, c.QueueAlpha)
	case c.MinQueueLen < 1:
		return fmt.Errorf("%w: MinQueueLen %d must be at least 1", ErrConfig, c.MinQueueLen)
	case c.MinModelHolders < 0:
		return fmt.Errorf("%w: MinModelHolders %d is negative", ErrConfig, c.MinModelHolders)
	case c.MaxReplicas < 1 || c.MaxReplicas > 64:
		return fmt.Errorf("%w: MaxReplicas %d must be in [1, 64]", ErrConfig, c.MaxReplicas)
	case len(c.RoundScores) == 0 || len(c.RoundScores) > 64:
		return fmt.Errorf("%w: RoundScores needs 1 to 64 entries", ErrConfig)
	case c.ScoreWindow < 1:
		return fmt.Errorf("%w: ScoreWindow %d must be at least 1", ErrConfig, c.ScoreWindow)
	case c.SpeedWeight+c.VRAMWeight+c.TimeoutWeight == 0:
		return fmt.Errorf("%w: QoS weights are all zero", ErrConfig)
	case c.MinTimeout < 0:
		return fmt.Errorf("%w: MinTimeout %v is negative", ErrConfig, c.MinTimeout)
	case c.KickTimeoutWindow < 1 || c.KickTimeouts < 1 || c.KickTimeouts > c.KickTimeoutWindow:
		return fmt.Errorf("%w: need 1 <= KickTimeouts (%d) <= KickTimeoutWindow (%d)", ErrConfig, c.KickTimeouts, c.KickTimeoutWindow)
	case c.KickScoreWindow < 1:
		return fmt.Errorf("%w: KickScoreWindow %d must be at least 1", ErrConfig, c.KickScoreWindow)
	case c.KickLowStreak < 1:
		return fmt.Errorf("%w: KickLowStreak %d must be at least 1", ErrConfig, c.KickLowStreak)
	case c.FailReports < 1:
		return fmt.Errorf("%w: FailReports %d must be at least 1", ErrConfig, c.FailReports)
	}
	for i := 1; i < len(c.RoundScores); i++ {
		if c.RoundScores[i] > c.RoundScores[i-1] {
			return fmt.Errorf("%w: RoundScores must not increase (position %d)", ErrConfig, i)
		}
	}
	if c.RoundScores[0] > 1<<20 {
		return fmt.Errorf("%w: RoundScores[0] %d is too large", ErrConfig, c.RoundScores[0])
	}
	if c.FeeBasePoints > 1<<20 {
		return fmt.Errorf("%w: FeeBasePoints %d is too large", ErrConfig, c.FeeBasePoints)
	}
	return nil
}

// maxTaskScore is the best score one task can give: first in both rounds.
func (c Config) maxTaskScore() uint32 { return 2 * c.RoundScores[0] }

// queueCap is max(⌊α·N⌋, MinQueueLen).
func (c Config) queueCap(live int) int {
	n := math.Floor(c.QueueAlpha * float64(live))
	if n > math.MaxInt32 {
		n = math.MaxInt32
	}
	return max(int(n), c.MinQueueLen)
}
