package dispatch

import (
	"math"
	"math/big"
	"testing"
)

func TestLocalityBoost(t *testing.T) {
	for _, tc := range []struct {
		name       string
		job, local []string
		inUse      []string
		want       float64
	}{
		{"no models needed", nil, []string{"a"}, nil, 1},
		{"nothing held", []string{"a", "b"}, nil, nil, 1},
		{"all on disk", []string{"a", "b"}, []string{"a", "b"}, nil, 1.7},
		{"all on disk and loaded", []string{"a", "b"}, []string{"a", "b"}, []string{"a", "b"}, 2},
		{"half on disk", []string{"a", "b"}, []string{"a", "x"}, nil, 1.35},
		{"one of four loaded", []string{"a", "b", "c", "d"}, []string{"a"}, []string{"a"}, 1.25},
		{"duplicates count once", []string{"a", "a", "b"}, []string{"a"}, nil, 1.35},
		{"one of three on disk", []string{"a", "b", "c"}, []string{"c"}, nil, 37.0 / 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LocalityBoost(tc.job, tc.local, tc.inUse); got != tc.want {
				t.Fatalf("M = %v, want %v", got, tc.want)
			}
		})
	}
}

func wei(s string) *big.Int {
	x, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return x
}

func TestStakeScores(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stakes []*big.Int
		want   []float64
	}{
		{"quarter stake is half score", []*big.Int{wei("400"), wei("100"), wei("0")}, []float64{1, 0.5, 0}},
		{"nil counts as zero", []*big.Int{nil, wei("9")}, []float64{0, 1}},
		{"nobody staked", []*big.Int{wei("0"), nil}, []float64{0, 0}},
		{"beyond float64 integers", []*big.Int{wei("4000000000000000000000000000000"), wei("1000000000000000000000000000000")}, []float64{1, 0.5}},
		{"tiny stakes keep precision", []*big.Int{wei("2"), wei("1")}, []float64{1, 1 / math.Sqrt2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := StakeScores(tc.stakes)
			for i := range got {
				if math.Abs(got[i]-tc.want[i]) > 1e-9 {
					t.Fatalf("S = %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestWeight(t *testing.T) {
	for _, tc := range []struct {
		m, s, q, want float64
	}{
		{1, 1, 1, 0.5},
		{2, 1, 1, 1},
		{1, 0, 1, 0},
		{1, 1, 0, 0},
		{1.7, 0.5, 0.5, 0.425},
		{1, 0.25, 1, 0.2},
	} {
		if got := Weight(tc.m, tc.s, tc.q); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("W(%v,%v,%v) = %v, want %v", tc.m, tc.s, tc.q, got, tc.want)
		}
	}
}

// TestWeightedSelectionFrequencies draws 100,000 times among nodes whose
// weights come from stake, QoS and locality, and checks the counts against
// W/ΣW with a chi-square bound (fixed seed, so deterministic).
func TestWeightedSelectionFrequencies(t *testing.T) {
	job := Job{ID: "j", Price: big.NewInt(1), Models: []string{"m1", "m2"}}
	nodes := []Node{
		{ID: "a", Stake: wei("1000000"), QoS: 1, LocalModels: []string{"m1", "m2"}, InUseModels: []string{"m1"}},
		{ID: "b", Stake: wei("250000"), QoS: 0.9},
		{ID: "c", Stake: wei("640000"), QoS: 0.3, LocalModels: []string{"m2"}},
		{ID: "d", Stake: wei("10000"), QoS: 0.8},
		{ID: "e", Stake: wei("1000000"), QoS: 0},
		{ID: "f", Stake: wei("90000"), QoS: 0.5, InUseModels: []string{"m1", "m2"}},
	}
	w := Weights(job, nodes)
	if w[4] != 0 {
		t.Fatalf("QoS 0 must weigh 0, got %v", w[4])
	}
	// Node a: M = 1 + 0.7 + 0.15, S = 1, Q = 1 → W = 1.85·0.5.
	if math.Abs(w[0]-0.925) > 1e-12 {
		t.Fatalf("W[a] = %v, want 0.925", w[0])
	}
	c := NewChooser(Seed([]byte("j"), []byte{0}))
	counts := make([]int, len(w))
	const n = 100_000
	for range n {
		i, err := c.Choose(w)
		if err != nil {
			t.Fatal(err)
		}
		counts[i]++
	}
	if counts[4] != 0 {
		t.Fatalf("zero-weight node chosen %d times", counts[4])
	}
	// 4 degrees of freedom over the 5 positive weights: 18.47 at 0.999.
	if chi := chiSquare(counts, w, n); chi > 18.47 {
		t.Fatalf("chi-square %.2f: counts %v weights %v", chi, counts, w)
	}
}
