package dispatch

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"testing"
)

func TestSplitFee(t *testing.T) {
	for _, tc := range []struct {
		name    string
		total   string
		weights []uint64
		want    []string
	}{
		{"exact", "300", []uint64{1, 1, 1}, []string{"100", "100", "100"}},
		{"remainder to the largest fractions", "100", []uint64{20, 10, 4}, []string{"59", "29", "12"}},
		{"ties go to the lower index", "2", []uint64{1, 1, 1}, []string{"1", "1", "0"}},
		{"zero weight gets nothing", "7", []uint64{0, 3, 0, 4}, []string{"0", "3", "0", "4"}},
		{"one payee", "12345", []uint64{9}, []string{"12345"}},
		{"zero total", "0", []uint64{5, 1}, []string{"0", "0"}},
		{"big wei", "1000000000000000000000000000001", []uint64{1, 1}, []string{"500000000000000000000000000001", "500000000000000000000000000000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SplitFee(wei(tc.total), tc.weights)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.want {
				if got[i].String() != tc.want[i] {
					t.Fatalf("shares %v, want %v", got, tc.want)
				}
			}
		})
	}
	// 100·20/34 = 58.82, 100·10/34 = 29.41, 100·4/34 = 11.76: floors 58, 29,
	// 11 leave 2 wei, for the fractions .82 and .76.
}

func TestSplitFeeErrors(t *testing.T) {
	if _, err := SplitFee(big.NewInt(10), []uint64{0, 0}); !errors.Is(err, ErrNoShares) {
		t.Fatalf("all zero: %v", err)
	}
	if _, err := SplitFee(big.NewInt(10), nil); !errors.Is(err, ErrNoShares) {
		t.Fatalf("no payees: %v", err)
	}
	if _, err := SplitFee(big.NewInt(-1), []uint64{1}); !errors.Is(err, ErrBadWeights) {
		t.Fatalf("negative: %v", err)
	}
	if _, err := SplitFee(nil, []uint64{1}); !errors.Is(err, ErrBadWeights) {
		t.Fatalf("nil: %v", err)
	}
	if _, err := SplitFee(big.NewInt(1), make([]uint64, MaxFeeShares+1)); !errors.Is(err, ErrBadWeights) {
		t.Fatalf("too many: %v", err)
	}
}

func TestFeeWeightsFromOutcome(t *testing.T) {
	o := outcome("t", []string{"a", "b", "c"}, "b", "c", "a")
	w, err := FeeWeights(DefaultConfig(), o)
	if err != nil {
		t.Fatal(err)
	}
	shares, _ := SplitFee(cnx(1), w)
	// b first in both rounds (20), c second (10), a third (4).
	if shares[1].Cmp(shares[2]) <= 0 || shares[2].Cmp(shares[0]) <= 0 {
		t.Fatalf("shares %v not ordered by submission speed", shares)
	}
	checkSplit(t, cnx(1), w, shares)
}

// checkSplit asserts the invariants of a split: the total is conserved,
// zero weights get nothing, and each share is within one wei of the exact
// proportional amount.
func checkSplit(t *testing.T, total *big.Int, weights []uint64, shares []*big.Int) {
	t.Helper()
	sum, wsum := new(big.Int), new(big.Int)
	for _, w := range weights {
		wsum.Add(wsum, new(big.Int).SetUint64(w))
	}
	for i, s := range shares {
		sum.Add(sum, s)
		exact := new(big.Int).Mul(total, new(big.Int).SetUint64(weights[i]))
		floor := new(big.Int).Quo(exact, wsum)
		if d := new(big.Int).Sub(s, floor); d.Sign() < 0 || d.Cmp(big.NewInt(1)) > 0 {
			t.Fatalf("share %d = %v, floor %v", i, s, floor)
		}
		if weights[i] == 0 && s.Sign() != 0 {
			t.Fatalf("zero weight %d got %v", i, s)
		}
	}
	if sum.Cmp(total) != 0 {
		t.Fatalf("shares sum to %v, total %v", sum, total)
	}
}

func TestSplitFeeConservesProperty(t *testing.T) {
	s := NewStream([]byte("fee-property"))
	for range 2000 {
		n := 1 + s.Uniform(12)
		weights := make([]uint64, n)
		for i := range weights {
			weights[i] = s.Uniform(30)
		}
		weights[s.Uniform(n)] += 1 // at least one positive
		total := new(big.Int).Lsh(new(big.Int).SetUint64(s.Uint64()), uint(s.Uniform(100)))
		shares, err := SplitFee(total, weights)
		if err != nil {
			t.Fatal(err)
		}
		checkSplit(t, total, weights, shares)
	}
}

func FuzzSplitFee(f *testing.F) {
	f.Add([]byte{1, 2, 3}, uint64(100), uint8(0))
	f.Add([]byte{0, 0, 7}, uint64(1), uint8(200))
	f.Add([]byte{255, 1}, ^uint64(0), uint8(190))
	f.Fuzz(func(t *testing.T, raw []byte, amount uint64, shift uint8) {
		if len(raw) > 64 {
			raw = raw[:64]
		}
		weights := make([]uint64, len(raw))
		positive := false
		for i, b := range raw {
			weights[i] = uint64(b) * uint64(b) * 1_000_003
			positive = positive || b != 0
		}
		total := new(big.Int).Lsh(new(big.Int).SetUint64(amount), uint(shift))
		shares, err := SplitFee(total, weights)
		if total.BitLen() > MaxPriceBits {
			if !errors.Is(err, ErrBadWeights) {
				t.Fatalf("oversized total: %v", err)
			}
			return
		}
		if !positive {
			if !errors.Is(err, ErrNoShares) {
				t.Fatalf("all-zero weights: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		checkSplit(t, total, weights, shares)
	})
}

func TestSpeedFeeWeights(t *testing.T) {
	trio := []string{"a", "b", "c"}
	// Seed 003's figure: b first in both rounds, then c, then a.
	bca := outcome("t0", trio, "b", "c", "a")
	// Everyone alone in its own task: equal speed.
	alone := []TaskOutcome{outcome("a", []string{"a"}, "a"), outcome("b", []string{"b"}, "b")}
	late := TaskOutcome{TaskID: "t1", Assigned: trio, Commits: []string{"a", "b", "c"}, Disclosures: []string{"c", "a"}}
	for _, tc := range []struct {
		name    string
		payees  int
		tasks   []TaskOutcome
		credits []FeeCredit
		want    []uint64
	}{
		{"first earns most", 3, []TaskOutcome{bca}, []FeeCredit{{0, 0, "a"}, {1, 0, "b"}, {2, 0, "c"}},
			[]uint64{2 + 2, 10 + 10, 5 + 5}},
		{"equal speed is proportional to results", 2, alone,
			[]FeeCredit{{0, 0, "a"}, {0, 0, "a"}, {0, 0, "a"}, {1, 1, "b"}}, []uint64{3 * 20, 20}},
		{"unknown rounds earn the floor", 2, nil, []FeeCredit{{0, -1, "a"}, {1, -1, "b"}, {1, -1, "b"}}, []uint64{4, 8}},
		{"two processors share a payee", 2, []TaskOutcome{bca}, []FeeCredit{{0, 0, "a"}, {0, 0, "b"}, {1, 0, "c"}},
			[]uint64{4 + 20, 10}},
		{"not in the rounds earns the floor", 1, []TaskOutcome{bca}, []FeeCredit{{0, 0, "stranger"}}, []uint64{4}},
		{"a timed-out discloser scores its commit only", 3, []TaskOutcome{late},
			[]FeeCredit{{0, 0, "a"}, {1, 0, "b"}, {2, 0, "c"}}, []uint64{10 + 5, 5 + 0, 2 + 10}},
		{"a payee without credit weighs 0", 2, []TaskOutcome{bca}, []FeeCredit{{1, 0, "a"}}, []uint64{0, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SpeedFeeWeights(DefaultConfig(), tc.payees, tc.tasks, tc.credits)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("weights %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSpeedFeeReferenceSplit: three submitters in the table, first, second
// and third in both rounds (task scores 20 : 10 : 4, i.e. 10 : 5 : 2), are
// paid exactly the reference split, 58.8% / 29.4% / 11.8%.
func TestSpeedFeeReferenceSplit(t *testing.T) {
	o := outcome("t", []string{"a", "b", "c"}, "a", "b", "c")
	credits := []FeeCredit{{0, 0, "a"}, {1, 0, "b"}, {2, 0, "c"}}
	w, err := SpeedFeeWeights(DefaultConfig(), 3, []TaskOutcome{o}, credits)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(w, []uint64{20, 10, 4}) {
		t.Fatalf("weights %v, want the task scores [20 10 4]", w)
	}
	shares, err := SplitFee(big.NewInt(17_000), w)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{10_000, 5_000, 2_000} { // 58.8 / 29.4 / 11.8 %
		if shares[i].Int64() != want {
			t.Fatalf("shares %v, want 10000 5000 2000", shares)
		}
	}
}

// TestSpeedFeeFloor: in a MacroJob with more submitters than the table
// scores, every credited result past the table earns the floor, the task
// score of the table's last place; FeeBasePoints caps it and 0 turns it
// off.
func TestSpeedFeeFloor(t *testing.T) {
	cfg := DefaultConfig()
	five := []string{"a", "b", "c", "d", "e"}
	o := outcome("t", five, five...)
	var credits []FeeCredit
	for i, p := range five {
		credits = append(credits, FeeCredit{i, 0, p})
	}
	for _, tc := range []struct {
		base uint32
		want []uint64
	}{
		{4, []uint64{20, 10, 4, 4, 4}},
		{100, []uint64{20, 10, 4, 4, 4}}, // capped at the last place
		{1, []uint64{20, 10, 4, 1, 1}},
		{0, []uint64{20, 10, 4, 0, 0}},
	} {
		cfg.FeeBasePoints = tc.base
		w, err := SpeedFeeWeights(cfg, len(five), []TaskOutcome{o}, credits)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(w, tc.want) {
			t.Fatalf("base %d: weights %v, want %v", tc.base, w, tc.want)
		}
	}
}

func TestSpeedFeeWeightsErrors(t *testing.T) {
	cfg := DefaultConfig()
	o := outcome("t", []string{"a"}, "a")
	for name, run := range map[string]func() error{
		"payee out of range": func() error {
			_, err := SpeedFeeWeights(cfg, 1, []TaskOutcome{o}, []FeeCredit{{1, 0, "a"}})
			return err
		},
		"negative payee": func() error {
			_, err := SpeedFeeWeights(cfg, 1, []TaskOutcome{o}, []FeeCredit{{-1, 0, "a"}})
			return err
		},
		"task out of range": func() error {
			_, err := SpeedFeeWeights(cfg, 1, []TaskOutcome{o}, []FeeCredit{{0, 1, "a"}})
			return err
		},
		"too many payees": func() error {
			_, err := SpeedFeeWeights(cfg, MaxFeeShares+1, nil, nil)
			return err
		},
	} {
		if err := run(); !errors.Is(err, ErrBadWeights) {
			t.Errorf("%s: %v", name, err)
		}
	}
	bad := TaskOutcome{TaskID: "t", Assigned: []string{"a"}, Commits: []string{"a", "a"}}
	if _, err := SpeedFeeWeights(cfg, 1, []TaskOutcome{bad}, []FeeCredit{{0, 0, "a"}}); !errors.Is(err, ErrBadOutcome) {
		t.Errorf("bad outcome: %v", err)
	}
	cfg.FeeBasePoints = 1<<20 + 1
	if _, err := SpeedFeeWeights(cfg, 1, nil, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("bad config: %v", err)
	}
}

// TestSpeedFeeSplitProperty splits random prices over random tasks and
// credits: the shares always sum to the price, and in one task a processor
// that is ahead in both rounds never earns less per result than one behind
// it.
func TestSpeedFeeSplitProperty(t *testing.T) {
	s := NewStream([]byte("speed-fee-property"))
	cfg := DefaultConfig()
	procs := []string{"p0", "p1", "p2", "p3", "p4", "p5"}
	for range 1000 {
		var tasks []TaskOutcome
		var credits []FeeCredit
		payees := 1 + int(s.Uniform(4))
		payeeOf := map[string]int{}
		for _, p := range procs {
			payeeOf[p] = int(s.Uniform(uint64(payees)))
		}
		for ti := range 1 + int(s.Uniform(4)) {
			order := slices.Clone(procs[:1+s.Uniform(uint64(len(procs)))])
			for i := len(order) - 1; i > 0; i-- {
				j := s.Uniform(uint64(i + 1))
				order[i], order[j] = order[j], order[i]
			}
			o := TaskOutcome{TaskID: fmt.Sprint(ti), Assigned: slices.Sorted(slices.Values(order)), Commits: order, Disclosures: order}
			tasks = append(tasks, o)
			for _, p := range order {
				for range 1 + s.Uniform(3) {
					credits = append(credits, FeeCredit{Payee: payeeOf[p], Task: ti, Processor: p})
				}
			}
			// Per-result weight follows the order.
			var prev uint64 = 1 << 62
			for _, p := range order {
				w, err := SpeedFeeWeights(cfg, 1, []TaskOutcome{o}, []FeeCredit{{0, 0, p}})
				if err != nil {
					t.Fatal(err)
				}
				if w[0] > prev || w[0] < uint64(cfg.FeeBasePoints) {
					t.Fatalf("task %v: %s earns %d per result after %d", o, p, w[0], prev)
				}
				prev = w[0]
			}
		}
		weights, err := SpeedFeeWeights(cfg, payees, tasks, credits)
		if err != nil {
			t.Fatal(err)
		}
		total := new(big.Int).Lsh(new(big.Int).SetUint64(s.Uint64()), uint(s.Uniform(100)))
		shares, err := SplitFee(total, weights)
		if err != nil {
			t.Fatal(err) // every result earns FeeBasePoints: never all zero
		}
		checkSplit(t, total, weights, shares)
	}
}
