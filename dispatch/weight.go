package dispatch

import (
	"math/big"
)

// Locality boost weights (seed 001): on-disk locality saves the download and
// counts 0.7, in-memory locality saves loading and adds 0.3. They are
// applied as the exact ratio (10·total + 7·local + 3·inUse)/(10·total).
const (
	localityDiskTenths = 7
	localityMemTenths  = 3
)

// LocalityBoost is M = 1 + 0.7·local/total + 0.3·inUse/total, where total is
// the number of distinct models the job needs, local how many of them the
// node has on disk and inUse how many it has loaded in GPU memory. M is 1
// when the job needs no model. The value is one correctly rounded division of
// two integers.
func LocalityBoost(jobModels, localModels, inUseModels []string) float64 {
	req := uniq(jobModels)
	if len(req) == 0 {
		return 1
	}
	local, inUse := countHeld(req, toSet(localModels)), countHeld(req, toSet(inUseModels))
	return boost(len(req), local, inUse)
}

func boost(total, local, inUse int) float64 {
	if total == 0 {
		return 1
	}
	num := 10*total + localityDiskTenths*local + localityMemTenths*inUse
	return float64(num) / float64(10*total)
}

func toSet(s []string) map[string]struct{} {
	m := make(map[string]struct{}, len(s))
	for _, x := range s {
		m[x] = struct{}{}
	}
	return m
}

func countHeld(req []string, held map[string]struct{}) int {
	n := 0
	for _, r := range req {
		if _, ok := held[r]; ok {
			n++
		}
	}
	return n
}

// stakeRoot is ⌊√(stake·2^64)⌋ = ⌊√stake·2^32⌋ as the nearest float64. The
// 2^64 shift keeps 32 fractional bits of the root, so small stakes keep
// their precision; big.Int.Sqrt is exact and big.Float rounds to nearest
// even, so the result is the same on every machine.
func stakeRoot(stake *big.Int) float64 {
	if stake == nil || stake.Sign() <= 0 {
		return 0
	}
	x := new(big.Int).Lsh(stake, 64)
	x.Sqrt(x)
	f, _ := new(big.Float).SetInt(x).Float64()
	return f
}

// StakeScores returns S_i = √s_i / max_j √s_j over the given stakes (the
// candidate pool), each one IEEE division of the roots of stakeRoot. All
// scores are 0 when nobody has staked.
func StakeScores(stakes []*big.Int) []float64 {
	roots := make([]float64, len(stakes))
	var top float64
	for i, s := range stakes {
		roots[i] = stakeRoot(s)
		top = max(top, roots[i])
	}
	out := make([]float64, len(stakes))
	if top == 0 {
		return out
	}
	for i, r := range roots {
		out[i] = r / top
	}
	return out
}

// Weight is the selection weight W = M·S·Q/(S+Q) of seed 001: the harmonic
// combination of stake score S and QoS score Q, scaled by the locality boost
// M. It is 0 when S or Q is 0 (no division by zero).
func Weight(m, s, q float64) float64 {
	if s <= 0 || q <= 0 {
		return 0
	}
	return float64(m*s*q) / float64(s+q)
}

// Weights computes W for each node against job, with S normalised over
// exactly these nodes. Use it for any weighted choice among a known set
// (queue requesters, dispute referees) and feed the result to a Chooser.
func Weights(job Job, nodes []Node) []float64 {
	req := uniq(job.Models)
	stakes := make([]*big.Int, len(nodes))
	for i := range nodes {
		stakes[i] = nodes[i].Stake
	}
	s := StakeScores(stakes)
	out := make([]float64, len(nodes))
	for i, n := range nodes {
		m := boost(len(req), countHeld(req, toSet(n.LocalModels)), countHeld(req, toSet(n.InUseModels)))
		out[i] = Weight(m, s[i], n.QoS)
	}
	return out
}
