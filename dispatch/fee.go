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
