package dispatch

import (
	"fmt"
	"math/big"
	"slices"
)

// MaxFeeShares bounds the number of payees of one split.
const MaxFeeShares = 1024

// SplitFee divides total wei among payees in proportion to weights, exactly:
//
//	share_i = ⌊total·w_i / Σw⌋
//
// and the remainder total − Σshare_i (fewer wei than there are payees) goes
// one wei each to the payees with the largest fractional part total·w_i mod
// Σw, the lower index first among equals. The shares always sum to total and
// a payee with weight 0 gets 0. The caller fixes the payee order (for
// example by processor ID) so every node computes the same split.
func SplitFee(total *big.Int, weights []uint64) ([]*big.Int, error) {
	if total == nil || total.Sign() < 0 || total.BitLen() > MaxPriceBits {
		return nil, fmt.Errorf("%w: fee total missing, negative or above 2^256", ErrBadWeights)
	}
	if len(weights) > MaxFeeShares {
		return nil, fmt.Errorf("%w: %d payees, at most %d", ErrBadWeights, len(weights), MaxFeeShares)
	}
	sum := new(big.Int)
	for _, w := range weights {
		sum.Add(sum, new(big.Int).SetUint64(w))
	}
	if sum.Sign() == 0 {
		return nil, ErrNoShares
	}
	shares := make([]*big.Int, len(weights))
	fracs := make([]*big.Int, len(weights))
	given := new(big.Int)
	for i, w := range weights {
		n := new(big.Int).Mul(total, new(big.Int).SetUint64(w))
		shares[i], fracs[i] = new(big.Int).QuoRem(n, sum, new(big.Int))
		given.Add(given, shares[i])
	}
	rest := new(big.Int).Sub(total, given).Int64() // < len(weights)
	order := make([]int, len(weights))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return fracs[b].Cmp(fracs[a]) })
	one := big.NewInt(1)
	for _, i := range order[:rest] {
		shares[i].Add(shares[i], one)
	}
	return shares, nil
}

// FeeWeights are the fee weights of a task's processors, in the order of
// o.Assigned: their task scores, so earlier submitters earn more (seed 003,
// task fee distribution).
func FeeWeights(cfg Config, o TaskOutcome) ([]uint64, error) {
	s, err := TaskScores(cfg, o)
	if err != nil {
		return nil, err
	}
	out := make([]uint64, len(s))
	for i, x := range s {
		out[i] = uint64(x)
	}
	return out, nil
}

// FeeCredit is one credited result in a speed-weighted split: the payee it
// pays, and the task and processor that earned it.
type FeeCredit struct {
	// Payee is the index of the payee the result pays, in [0, payees).
	Payee int
	// Task is the index of the result's task in the tasks given to
	// SpeedFeeWeights, or -1 when the task's rounds are not known (task
	// score 0).
	Task int
	// Processor is who produced the result.
	Processor string
}

// SpeedFeeWeights are the fee weights of payees split by submission speed
// (seed 003, task fee distribution): each credited result adds
//
//	max(ts, FeeFloor(cfg))
//
// to its payee's weight, ts being its processor's task score in the
// result's task (TaskScores; 0 when the processor is not in the task's
// rounds or the task is -1). Where every credited processor scores in the
// round-score table, the weights are the task scores and the split is the
// reference split; a result past the table earns the floor. A payee
// credited with several results, in one task or many, earns for each.
// With equal speed the weights are proportional to the results credited;
// SplitFee turns them into exact shares.
func SpeedFeeWeights(cfg Config, payees int, tasks []TaskOutcome, credits []FeeCredit) ([]uint64, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if payees < 0 || payees > MaxFeeShares {
		return nil, fmt.Errorf("%w: %d payees, at most %d", ErrBadWeights, payees, MaxFeeShares)
	}
	floor := FeeFloor(cfg)
	// Task scores by task, computed when a credit first needs them.
	scores := make([]map[string]uint32, len(tasks))
	score := func(task int, processor string) (uint32, error) {
		if task == -1 {
			return 0, nil
		}
		if task < 0 || task >= len(tasks) {
			return 0, fmt.Errorf("%w: credit of task %d, %d tasks", ErrBadWeights, task, len(tasks))
		}
		if scores[task] == nil {
			o := tasks[task]
			ts, err := TaskScores(cfg, o)
			if err != nil {
				return 0, err
			}
			scores[task] = make(map[string]uint32, len(ts))
			for i, id := range o.Assigned {
				scores[task][id] = ts[i]
			}
		}
		return scores[task][processor], nil
	}
	out := make([]uint64, payees)
	for _, c := range credits {
		if c.Payee < 0 || c.Payee >= payees {
			return nil, fmt.Errorf("%w: credit of payee %d, %d payees", ErrBadWeights, c.Payee, payees)
		}
		ts, err := score(c.Task, c.Processor)
		if err != nil {
			return nil, err
		}
		// At most 2^21 per credit (Validate): no overflow below 2^40
		// credits, far above any job's result count.
		out[c.Payee] += uint64(max(ts, floor))
	}
	return out, nil
}

// FeeFloor is the least fee weight of a credited result:
// min(FeeBasePoints, 2·RoundScores[last]). It lifts only results whose
// task score is below the table's last place scored in both rounds, so it
// never changes the split of a task whose submitters all score.
func FeeFloor(cfg Config) uint32 {
	return min(cfg.FeeBasePoints, 2*cfg.RoundScores[len(cfg.RoundScores)-1])
}
