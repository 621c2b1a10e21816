package dispatch

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"slices"
	"testing"
)

// TestStreamSpec recomputes the stream from its written definition, so an
// implementation in another language can check itself against the vector.
func TestStreamSpec(t *testing.T) {
	seed := []byte("job-1")
	s := NewStream(seed)
	for k := range uint64(3) {
		var c [8]byte
		binary.BigEndian.PutUint64(c[:], k)
		block := sha256.Sum256(slices.Concat([]byte("jobmesh/dispatch/rng/v1"), seed, c[:]))
		for w := range 4 {
			want := binary.BigEndian.Uint64(block[8*w:])
			if got := s.Uint64(); got != want {
				t.Fatalf("block %d word %d: got %#x want %#x", k, w, got, want)
			}
		}
	}
}

func TestSeedSpec(t *testing.T) {
	got := Seed([]byte("ab"), []byte("c"))
	want := sha256.Sum256(slices.Concat([]byte("jobmesh/dispatch/seed/v1"), []byte{0, 0, 0, 2}, []byte("ab"), []byte{0, 0, 0, 1}, []byte("c")))
	if hex.EncodeToString(got) != hex.EncodeToString(want[:]) {
		t.Fatalf("Seed: got %x want %x", got, want)
	}
	if slices.Equal(Seed([]byte("ab"), []byte("c")), Seed([]byte("a"), []byte("bc"))) {
		t.Fatal("length prefixes must separate part boundaries")
	}
}

// TestChooseGoldenVector pins the draws so that a change to the RNG, the
// quantisation or the walk shows up as a protocol change.
func TestChooseGoldenVector(t *testing.T) {
	c := NewChooser(Seed([]byte("golden")))
	w := []float64{1, 2, 3, 4}
	var got []int
	for range 12 {
		i, err := c.Choose(w)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, i)
	}
	want := []int{2, 3, 0, 3, 2, 0, 0, 3, 2, 1, 2, 3}
	if !slices.Equal(got, want) {
		t.Fatalf("draws changed: got %v want %v", got, want)
	}
}

func TestUniformRange(t *testing.T) {
	s := NewStream([]byte("u"))
	counts := make([]int, 3)
	for range 30000 {
		counts[s.Uniform(3)]++
	}
	for i, c := range counts {
		if c < 9500 || c > 10500 {
			t.Fatalf("bucket %d: %d draws, want about 10000", i, c)
		}
	}
	if s.Uniform(1) != 0 {
		t.Fatal("Uniform(1) must be 0")
	}
}

// chiSquare returns the statistic of observed counts against weights.
func chiSquare(counts []int, weights []float64, n int) float64 {
	var sum float64
	for _, w := range weights {
		sum += w
	}
	var chi float64
	for i, w := range weights {
		exp := float64(n) * w / sum
		if exp == 0 {
			continue
		}
		d := float64(counts[i]) - exp
		chi += d * d / exp
	}
	return chi
}

func TestChooseFrequencies(t *testing.T) {
	// Ten weights spanning two orders of magnitude; chi-square with 9
	// degrees of freedom stays below 27.88 with probability 0.999. The seed
	// is fixed, so the outcome is deterministic.
	w := []float64{0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0, 0.02}
	c := NewChooser(Seed([]byte("frequencies")))
	const n = 100_000
	counts := make([]int, len(w))
	for range n {
		i, err := c.Choose(w)
		if err != nil {
			t.Fatal(err)
		}
		counts[i]++
	}
	if chi := chiSquare(counts, w, n); chi > 27.88 {
		t.Fatalf("chi-square %.2f > 27.88: counts %v", chi, counts)
	}
}

func TestChooseZeroWeightNeverChosen(t *testing.T) {
	c := NewChooser([]byte("z"))
	for range 1000 {
		i, err := c.Choose([]float64{0, 1, 0, 1e-30})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 || i == 2 {
			t.Fatalf("chose zero weight %d", i)
		}
	}
}

func TestChooseErrors(t *testing.T) {
	for name, w := range map[string][]float64{
		"negative": {1, -1},
		"nan":      {math.NaN()},
		"inf":      {math.Inf(1)},
	} {
		if _, err := Choose(w, []byte("s")); !errors.Is(err, ErrBadWeights) {
			t.Errorf("%s: got %v, want ErrBadWeights", name, err)
		}
	}
	if _, err := Choose([]float64{0, 0}, []byte("s")); !errors.Is(err, ErrNoCandidates) {
		t.Errorf("all zero: got %v, want ErrNoCandidates", err)
	}
	if _, err := Choose(nil, []byte("s")); !errors.Is(err, ErrNoCandidates) {
		t.Errorf("empty: got %v, want ErrNoCandidates", err)
	}
	if _, err := NewChooser([]byte("s")).ChooseK([]float64{1, 0, 1}, 3); !errors.Is(err, ErrNoCandidates) {
		t.Errorf("k beyond positive weights: got %v", err)
	}
}

func TestChooseKDistinctAndDeterministic(t *testing.T) {
	w := []float64{5, 1, 1, 1, 0, 2, 3}
	a, err := NewChooser([]byte("k")).ChooseK(w, 6)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewChooser([]byte("k")).ChooseK(w, 6)
	if !slices.Equal(a, b) {
		t.Fatalf("same seed, different draws: %v %v", a, b)
	}
	seen := map[int]bool{}
	for _, i := range a {
		if seen[i] || i == 4 {
			t.Fatalf("draw %v repeats or picks the zero weight", a)
		}
		seen[i] = true
	}
	// Without replacement: the heaviest item is first in about 5/13 of
	// the draws.
	first := 0
	c := NewChooser([]byte("k-freq"))
	for range 20000 {
		got, _ := c.ChooseK(w, 3)
		if got[0] == 0 {
			first++
		}
	}
	if p := float64(first) / 20000; math.Abs(p-5.0/13) > 0.02 {
		t.Fatalf("heaviest first in %.3f of draws, want %.3f", p, 5.0/13)
	}
}

func TestQuantizeKeepsTinyWeights(t *testing.T) {
	q, total, err := quantize([]float64{1, 1e-300, 0})
	if err != nil {
		t.Fatal(err)
	}
	if q[0] != weightScale || q[1] != 1 || q[2] != 0 || total != weightScale+1 {
		t.Fatalf("quantize: %v total %d", q, total)
	}
}

// FuzzChoose feeds arbitrary float64 bit patterns as weights: every input
// either gets a clear error or an index whose weight is positive, and
// ChooseK never repeats an index.
func FuzzChoose(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 240, 63}, []byte("seed"), uint8(1))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 248, 127, 1, 0, 0, 0, 0, 0, 0, 0}, []byte{}, uint8(2))
	f.Fuzz(func(t *testing.T, raw, seed []byte, k uint8) {
		w := make([]float64, len(raw)/8)
		for i := range w {
			w[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		i, err := Choose(w, seed)
		if err != nil {
			if !errors.Is(err, ErrBadWeights) && !errors.Is(err, ErrNoCandidates) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if i < 0 || i >= len(w) || !(w[i] > 0) {
			t.Fatalf("chose %d of %v", i, w)
		}
		got, err := NewChooser(seed).ChooseK(w, int(k%8))
		if err != nil {
			if !errors.Is(err, ErrNoCandidates) {
				t.Fatalf("ChooseK: %v", err)
			}
			return
		}
		seen := map[int]bool{}
		for _, j := range got {
			if seen[j] || !(w[j] > 0) {
				t.Fatalf("ChooseK %v over %v", got, w)
			}
			seen[j] = true
		}
	})
}
