package dispatch

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"time"
)

// Sentinel errors; match them with errors.Is.
var (
	// ErrConfig marks an invalid Config.
	ErrConfig = errors.New("dispatch: invalid config")
	// ErrInvalidNode marks a Node that cannot be graded.
	ErrInvalidNode = errors.New("dispatch: invalid node")
	// ErrInvalidJob marks a Job that cannot be queued.
	ErrInvalidJob = errors.New("dispatch: invalid job")
	// ErrNoCandidates means no processor is eligible (or all weigh 0);
	// the job waits in the queue.
	ErrNoCandidates = errors.New("dispatch: no eligible processor")
	// ErrBadWeights marks weights that are negative, NaN, infinite or too
	// many.
	ErrBadWeights = errors.New("dispatch: bad weights")
	// ErrUnknownNode means a node ID is not in the pool.
	ErrUnknownNode = errors.New("dispatch: unknown node")
	// ErrDuplicate means an ID is already present.
	ErrDuplicate = errors.New("dispatch: duplicate id")
	// ErrBadOutcome marks an inconsistent TaskOutcome.
	ErrBadOutcome = errors.New("dispatch: bad task outcome")
	// ErrNoShares means a fee cannot be split because every weight is 0.
	ErrNoShares = errors.New("dispatch: no positive fee weight")
)

// Input bounds; records beyond them are rejected rather than truncated.
const (
	// MaxIDLen bounds node and job IDs.
	MaxIDLen = 256
	// MaxModels bounds the model lists of a node or job.
	MaxModels = 256
	// MaxPriceBits bounds a job price (a uint256 on chain).
	MaxPriceBits = 256
)

// Node is what dispatching needs to know about one live processor, taken
// from its replicated advertisement and the chain.
type Node struct {
	// ID is the processor's peer ID; it orders candidates.
	ID string
	// CardModel is the GPU model name; nodes grade into card model groups.
	CardModel string
	// VRAM is the memory of the card in MiB.
	VRAM uint64
	// Stake is the processor's staked amount in wei (nil means 0).
	Stake *big.Int
	// QoS is the QoS score Q in [0, 1] (see QoSScores).
	QoS float64
	// LocalModels are the model IDs on the processor's disk.
	LocalModels []string
	// InUseModels are the model IDs loaded in its GPU memory.
	InUseModels []string
}

// Validate checks the bounds of a Node.
func (n Node) Validate() error {
	switch {
	case n.ID == "" || len(n.ID) > MaxIDLen:
		return fmt.Errorf("%w: id length %d not in [1, %d]", ErrInvalidNode, len(n.ID), MaxIDLen)
	case len(n.CardModel) > MaxIDLen:
		return fmt.Errorf("%w %s: card model name too long", ErrInvalidNode, n.ID)
	case n.Stake != nil && (n.Stake.Sign() < 0 || n.Stake.BitLen() > MaxPriceBits):
		return fmt.Errorf("%w %s: stake out of range", ErrInvalidNode, n.ID)
	case math.IsNaN(n.QoS) || n.QoS < 0 || n.QoS > 1:
		return fmt.Errorf("%w %s: QoS %v not in [0, 1]", ErrInvalidNode, n.ID, n.QoS)
	case len(n.LocalModels) > MaxModels || len(n.InUseModels) > MaxModels:
		return fmt.Errorf("%w %s: more than %d models", ErrInvalidNode, n.ID, MaxModels)
	}
	return nil
}

// Job is what dispatching needs to know about one open job.
type Job struct {
	// ID is the job ID; it breaks ties in the queue order.
	ID string
	// Price is the escrowed fee in wei.
	Price *big.Int
	// MinVRAM is the least VRAM in MiB a processor needs.
	MinVRAM uint64
	// GPUModel, when set, restricts candidates to that card model.
	GPUModel string
	// Models are the model IDs the job needs (duplicates count once).
	Models []string
	// Units is the task size (images, blocks) for the time estimate.
	Units uint64
	// Replicas is how many processors of one card model run the job
	// together (seed 000 groups, replicated validation); 0 means 1.
	Replicas int
}

// Validate checks the bounds of a Job against cfg.
func (j Job) Validate(cfg Config) error {
	switch {
	case j.ID == "" || len(j.ID) > MaxIDLen:
		return fmt.Errorf("%w: id length %d not in [1, %d]", ErrInvalidJob, len(j.ID), MaxIDLen)
	case j.Price == nil || j.Price.Sign() < 0 || j.Price.BitLen() > MaxPriceBits:
		return fmt.Errorf("%w %s: price missing, negative or above 2^256", ErrInvalidJob, j.ID)
	case len(j.GPUModel) > MaxIDLen:
		return fmt.Errorf("%w %s: GPU model name too long", ErrInvalidJob, j.ID)
	case len(j.Models) > MaxModels:
		return fmt.Errorf("%w %s: more than %d models", ErrInvalidJob, j.ID, MaxModels)
	case j.Replicas < 0 || j.Replicas > cfg.MaxReplicas:
		return fmt.Errorf("%w %s: replicas %d not in [0, %d]", ErrInvalidJob, j.ID, j.Replicas, cfg.MaxReplicas)
	}
	if _, err := EstimatedTime(cfg, j.Units); err != nil {
		return fmt.Errorf("%w %s: %w", ErrInvalidJob, j.ID, err)
	}
	return nil
}

func (j Job) replicas() int { return max(j.Replicas, 1) }

// EstimatedTime is TaskOverhead + UnitTime·units (seed 002).
func EstimatedTime(cfg Config, units uint64) (time.Duration, error) {
	hi, lo := bits.Mul64(uint64(cfg.UnitTime), units)
	sum, carry := bits.Add64(lo, uint64(cfg.TaskOverhead), 0)
	if hi != 0 || carry != 0 || sum > math.MaxInt64 {
		return 0, fmt.Errorf("%w: estimated time of %d units overflows", ErrInvalidJob, units)
	}
	if sum == 0 {
		return 0, fmt.Errorf("%w: estimated time is zero", ErrInvalidJob)
	}
	return time.Duration(sum), nil
}

// TaskValue is price / estimated time in wei per second, exact (seed 002).
func TaskValue(cfg Config, j Job) (*big.Rat, error) {
	if err := j.Validate(cfg); err != nil {
		return nil, err
	}
	est, _ := EstimatedTime(cfg, j.Units)
	v := new(big.Rat).SetFrac(new(big.Int).Mul(j.Price, big.NewInt(int64(time.Second))), big.NewInt(int64(est)))
	return v, nil
}

// uniq returns the distinct entries of s in their first order.
func uniq(s []string) []string {
	if len(s) < 2 {
		return s
	}
	seen := make(map[string]struct{}, len(s))
	out := make([]string, 0, len(s))
	for _, x := range s {
		if _, ok := seen[x]; !ok {
			seen[x] = struct{}{}
			out = append(out, x)
		}
	}
	return out
}
