package finish

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// seedPick draws uniformly by the seed alone.
func seedPick(pool []string, seed []byte) (int, bool) {
	return int(binary.BigEndian.Uint64(seed[:8]) % uint64(len(pool))), true
}

// collusion is one dispute between an honest processor and a colluder, in
// a pool of procs processors of which a quarter collude: every colluder
// answers the same wrong hash.
type collusion struct {
	id       jobs.ID
	d        microjob.Dispute
	procs    []string
	colludes map[string]bool
}

func newCollusion(rng *rand.Rand, procs int) collusion {
	c := collusion{colludes: map[string]bool{}}
	for i := range c.id {
		c.id[i] = byte(rng.UintN(256))
	}
	for i := range procs {
		c.procs = append(c.procs, fmt.Sprintf("p%04d-%08x", i, rng.Uint32()))
	}
	slices.Sort(c.procs)
	for _, i := range rng.Perm(procs)[:procs/4] {
		c.colludes[c.procs[i]] = true
	}
	var honest, liar string
	for _, p := range c.procs {
		switch {
		case c.colludes[p] && liar == "":
			liar = p
		case !c.colludes[p] && honest == "":
			honest = p
		}
	}
	c.d = microjob.Dispute{Block: rng.Uint64N(1 << 20), Processors: [2]string{honest, liar}, Hashes: [2]string{hexHash("right"), hexHash("wrong")}}
	return c
}

func hexHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// settle walks the dispute to its end as the finalizer does (NextRequest
// on the rule's ruling, every re-runner answering) and returns the last
// ruling and the number of re-runners asked.
func (c collusion) settle(t *testing.T, esc Escalation) (Ruling, int) {
	recs := NewRecords()
	for {
		r := esc.RuleOf(recs, c.d)
		if r.Outcome == VoteWon || r.Outcome == VoteUndecided {
			return r, len(r.Votes)
		}
		var prev *records.Dispute
		if p, ok := recs.Dispute[c.d.Block]; ok {
			prev = &p
		}
		rec, ok := esc.NextRequest(c.id, c.d, prev, r, nil, c.procs, seedPick)
		if !ok {
			t.Fatalf("no request after ruling %+v", r)
		}
		recs.Dispute[c.d.Block] = rec
		for _, p := range DisputeRerunners(rec) {
			if !HasRerun(recs, c.d.Block, p) {
				h := c.d.Hashes[0]
				if c.colludes[p] {
					h = c.d.Hashes[1]
				}
				recs.Reruns[c.d.Block] = append(recs.Reruns[c.d.Block], records.Rerun{Block: c.d.Block, Hash: h, Processor: p})
			}
		}
	}
}

// TestColludersRarelyWin: over many seeded pools of 400 processors of
// which a quarter collude on one wrong hash, the honest side of a dispute
// never loses. Each draw is a colluder with probability about p = 1/4, so
// the bound is the gambler's ruin of the default margin, 1/(1 + 3^17) ≈
// 8·10⁻⁹ per dispute: over N = 2000 disputes, about 1.6·10⁻⁵ losses
// expected. The same pools with a margin of 2 (ruin 1/(1 + 3²) = 10%)
// do show losses, so the walk can fail.
func TestColludersRarelyWin(t *testing.T) {
	const n = 2000
	rng := rand.New(rand.NewPCG(21, 4))
	weak := Escalation{Margin: 2, MaxReruns: 8}
	lost, weakLost, undecided, asked := 0, 0, 0, 0
	for range n {
		c := newCollusion(rng, 400)
		r, k := c.settle(t, DefaultEscalation())
		asked += k
		switch {
		case r.Outcome == VoteUndecided:
			undecided++
		case r.Winner != c.d.Hashes[0]:
			lost++
		}
		if r, _ := c.settle(t, weak); r.Outcome == VoteWon && r.Winner != c.d.Hashes[0] {
			weakLost++
		}
	}
	t.Logf("%d disputes: %d lost, %d undecided, %.1f re-runs each; margin 2: %d lost", n, lost, undecided, float64(asked)/n, weakLost)
	if lost != 0 {
		t.Fatalf("the honest side lost %d of %d disputes", lost, n)
	}
	if weakLost == 0 {
		t.Fatal("a margin of 2 never lost: the walk cannot tell a weak rule")
	}
	if undecided > n/20 {
		t.Fatalf("%d of %d disputes undecided", undecided, n)
	}
}

func TestEscalationValidate(t *testing.T) {
	if err := DefaultEscalation().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, e := range []Escalation{{Margin: 1, MaxReruns: 3}, {Margin: 5, MaxReruns: 4}} {
		if err := e.Validate(); !errors.Is(err, ErrEscalation) {
			t.Errorf("%+v: %v", e, err)
		}
	}
}

// TestRerunnerDraw: each draw excludes the sides, those drawn and those
// dropped, and its seed changes with the number drawn; the first is
// ThirdDraw's.
func TestRerunnerDraw(t *testing.T) {
	id := jobs.ID{7}
	d := microjob.Dispute{Block: 3, Processors: [2]string{"a", "b"}}
	procs := []string{"a", "b", "c", "d", "e", "f"}
	pool0, seed0 := RerunnerDraw(id, d, nil, []string{"f"}, procs)
	third, thirdSeed := ThirdDraw(id, d, []string{"f"}, procs)
	if !slices.Equal(pool0, third) || !slices.Equal(seed0, thirdSeed) {
		t.Fatal("the first draw is not ThirdDraw's")
	}
	pool1, seed1 := RerunnerDraw(id, d, []string{"d"}, []string{"f"}, procs)
	if !slices.Equal(pool1, []string{"c", "e"}) || slices.Equal(seed1, seed0) {
		t.Fatalf("second draw: pool %v", pool1)
	}
	again, seedAgain := RerunnerDraw(id, d, []string{"d"}, []string{"f"}, procs)
	if !slices.Equal(again, pool1) || !slices.Equal(seedAgain, seed1) {
		t.Fatal("a draw is not repeatable")
	}
}

// TestValidDispute: a request whose re-runners repeat, include a side or
// a dropped one does not count.
func TestValidDispute(t *testing.T) {
	d := microjob.Dispute{Block: 1, Processors: [2]string{"a", "b"}}
	cases := map[string]struct {
		rec  records.Dispute
		want bool
	}{
		"first round":   {records.Dispute{Dispute: d, Third: "c", More: []string{"d", "e"}}, true},
		"a repeat":      {records.Dispute{Dispute: d, Third: "c", More: []string{"d", "c"}}, false},
		"a side":        {records.Dispute{Dispute: d, Third: "c", More: []string{"b"}}, false},
		"a dropped one": {records.Dispute{Dispute: d, Third: "c", More: []string{"e"}, Dropped: []string{"e"}}, false},
		"an empty one":  {records.Dispute{Dispute: d, Third: "c", More: []string{""}}, false},
	}
	for name, tc := range cases {
		if got := validDispute(tc.rec); got != tc.want {
			t.Errorf("%s: valid %t, want %t", name, got, tc.want)
		}
	}
}

// TestCheckRoundNamesTwo: a self-check's first round names two
// re-runners even where the margin asks for one (a margin of 2: a lead of
// 1 already, one more vote would decide), since a check record needs two.
func TestCheckRoundNamesTwo(t *testing.T) {
	esc := Escalation{Margin: 2, MaxReruns: 8}
	sc := SelfCheck{Block: 3, Processor: "p", Hash: strings.Repeat("ab", 32)}
	r := esc.CheckRuling(NewRecords(), sc)
	if r.Outcome != VoteEscalate || r.Ask != 1 {
		t.Fatalf("first ruling %+v, want an escalation asking 1", r)
	}
	rec, ok := esc.NextCheck(jobs.ID{1}, sc, nil, r, nil, []string{"p", "a", "b", "c"}, seedPick)
	if !ok {
		t.Fatal("no check written")
	}
	if rec.Thirds[0] == "" || rec.Thirds[1] == "" || rec.Thirds[0] == rec.Thirds[1] || slices.Contains(rec.Thirds[:], "p") {
		t.Fatalf("thirds %v", rec.Thirds)
	}
}
