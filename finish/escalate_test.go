package finish

import (
	"crypto/sha256"
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
		rec, ok := esc.NextRequest(c.id, c.d, prev, r, nil, PeerCandidates(c.procs), nil)
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

// keys are the keys of order's places.
func keys(order []Slot) []string {
	out := make([]string, len(order))
	for i, s := range order {
		out[i] = s.Key
	}
	return out
}

// TestRerunOrder: the rerun order holds every candidate but the sides,
// once each, whatever order the candidates come in; it differs from block
// to block and between a dispute and a check of one block, and a candidate
// added or removed leaves the others in their order.
func TestRerunOrder(t *testing.T) {
	id := jobs.ID{7}
	var peers []string
	for i := range 40 {
		peers = append(peers, fmt.Sprintf("p%02d", i))
	}
	cands := PeerCandidates(peers)
	sides := []string{"p03", "p17"}
	o := keys(RerunOrder(id, records.DisputeType, 5, cands, sides))
	if len(o) != 38 || slices.Contains(o, "p03") || slices.Contains(o, "p17") {
		t.Fatalf("order %v", o)
	}
	rev := slices.Clone(cands)
	slices.Reverse(rev)
	if !slices.Equal(keys(RerunOrder(id, records.DisputeType, 5, append(rev, cands[0]), sides)), o) {
		t.Fatal("the order depends on the candidates' order")
	}
	if slices.Equal(keys(RerunOrder(id, records.DisputeType, 6, cands, sides)), o) || slices.Equal(keys(RerunOrder(id, records.CheckType, 5, cands, sides)), o) {
		t.Fatal("two blocks or two kinds share an order")
	}
	fewer := keys(RerunOrder(id, records.DisputeType, 5, slices.DeleteFunc(slices.Clone(cands), func(c Candidate) bool { return c.Peer == o[2] }), sides))
	if !slices.Equal(fewer, slices.Delete(slices.Clone(o), 2, 3)) {
		t.Fatal("removing a candidate moved the others")
	}
}

// TestRerunOrderByWallet: peers that share a wallet share one place of
// the order, and the peers that share a side's wallet have none: binding
// more peers to one stake buys no more places, and a liar's other peers
// cannot vote for it.
func TestRerunOrderByWallet(t *testing.T) {
	var cands []Candidate
	for _, pk := range [][2]string{{"a", "wa"}, {"a2", "wa"}, {"b", "wb"}, {"c", "wc"}, {"c2", "wc"}, {"c3", "wc"}, {"d", "wd"}, {"e", "we"}} {
		cands = append(cands, Candidate{Peer: pk[0], Key: pk[1]})
	}
	o := RerunOrder(jobs.ID{3}, records.DisputeType, 1, cands, []string{"a", "b"})
	if !slices.Equal(slices.Sorted(slices.Values(keys(o))), []string{"wc", "wd", "we"}) {
		t.Fatalf("order %v", o)
	}
	for _, s := range o {
		if s.Key == "wc" && !slices.Equal(s.Peers, []string{"c", "c2", "c3"}) {
			t.Fatalf("wc's peers %v", s.Peers)
		}
	}
	d := microjob.Dispute{Block: 1, Processors: [2]string{"a", "b"}}
	req := func(named ...string) *Request {
		return &Request{Dispute: &records.Dispute{Dispute: d, Third: named[0], More: named[1:]}}
	}
	all := func(s Slot) string { return s.Peers[len(s.Peers)-1] }
	if !validOrder(jobs.ID{3}, req(all(o[0]), all(o[1]), all(o[2])), cands) {
		t.Error("one peer of each place refused")
	}
	if validOrder(jobs.ID{3}, req("c", "c2"), cands) {
		t.Error("two peers of one wallet accepted")
	}
	if validOrder(jobs.ID{3}, req("a2"), cands) {
		t.Error("a side's wallet mate accepted")
	}
}

// TestRerunOrderSalted: the salt (the hash of the block that created the
// job's escrow) reorders the candidates, so the job ID alone, which its
// creator chose, does not fix the order; a request ordered without the
// salt is refused by a reader that has it.
func TestRerunOrderSalted(t *testing.T) {
	id := jobs.ID{5}
	peers := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	salted := func(salt string) []Candidate {
		cs := PeerCandidates(peers)
		for i := range cs {
			cs[i].Salt = salt
		}
		return cs
	}
	plain := keys(RerunOrder(id, records.DisputeType, 2, salted(""), []string{"a", "b"}))
	one := keys(RerunOrder(id, records.DisputeType, 2, salted("0x01"), []string{"a", "b"}))
	two := keys(RerunOrder(id, records.DisputeType, 2, salted("0x02"), []string{"a", "b"}))
	if slices.Equal(plain, one) || slices.Equal(one, two) {
		t.Fatalf("the salt does not move the order: %v, %v, %v", plain, one, two)
	}
	if !slices.Equal(slices.Sorted(slices.Values(one)), slices.Sorted(slices.Values(plain))) {
		t.Fatalf("the salt changed the candidates: %v, %v", plain, one)
	}
	d := microjob.Dispute{Block: 2, Processors: [2]string{"a", "b"}}
	q := &Request{Dispute: &records.Dispute{Dispute: d, Third: plain[0], More: plain[1:3]}}
	if !validOrder(id, q, salted("")) {
		t.Fatal("the unsalted request refused without a salt")
	}
	if validOrder(id, q, salted("0x01")) {
		t.Fatalf("a request of %v accepted where the order starts %v", plain[:3], one[:3])
	}
}

// TestValidOrder: a request must ask exactly the first of its block's
// rerun order (named or dropped alike), never a processor that is not a
// candidate, and may say exhausted only once it asked them all.
func TestValidOrder(t *testing.T) {
	id := jobs.ID{9}
	cands := PeerCandidates([]string{"a", "b", "c", "d", "e", "f", "g"})
	d := microjob.Dispute{Block: 4, Processors: [2]string{"a", "b"}}
	o := keys(RerunOrder(id, records.DisputeType, d.Block, cands, d.Processors[:]))
	req := func(named, dropped []string, exhausted bool) *Request {
		return &Request{Dispute: &records.Dispute{Dispute: d, Third: named[0], More: named[1:], Dropped: dropped, Exhausted: exhausted}}
	}
	cases := map[string]struct {
		q    *Request
		want bool
	}{
		"a prefix":             {req(o[:3], nil, false), true},
		"a prefix with drops":  {req([]string{o[0], o[2]}, []string{o[1]}, false), true},
		"the prefix reordered": {req([]string{o[2], o[0], o[1]}, nil, false), true},
		"one skipped":          {req([]string{o[0], o[2]}, nil, false), false},
		"the last instead":     {req([]string{o[len(o)-1]}, nil, false), false},
		"not a candidate":      {req([]string{o[0], "z"}, nil, false), false},
		"exhausted early":      {req(o[:3], nil, true), false},
		"exhausted at the end": {req(o[:4], o[4:], true), true},
		"more than the order":  {req(append(slices.Clone(o), "z"), nil, false), false},
		"a side":               {req([]string{"a"}, nil, false), false},
		"dropped out of order": {req([]string{o[0]}, []string{o[3]}, false), false},
	}
	for name, tc := range cases {
		if got := validOrder(id, tc.q, cands); got != tc.want {
			t.Errorf("%s: %t, want %t", name, got, tc.want)
		}
	}
}

// TestDropsCannotTip: a writer colluding with liars drops every honest
// re-runner the moment it is named, so that the liars' fast answers are
// the only ones in; the vote waits for the dropped ones all the same, and
// the honest side wins once they answer. Without the rule counting a
// silent re-runner against the leader the liars' votes would have won.
func TestDropsCannotTip(t *testing.T) {
	esc := DefaultEscalation()
	for seed := range uint64(200) {
		c := newCollusion(rand.New(rand.NewPCG(seed, 99)), 200)
		recs := NewRecords()
		honestIn := map[string]bool{}
		for range 200 {
			r := esc.RuleOf(recs, c.d)
			if r.Outcome == VoteWon && r.Winner != c.d.Hashes[0] {
				t.Fatalf("seed %d: the liars won by dropping %d honest re-runners", seed, len(honestIn))
			}
			if r.Outcome == VoteWon || r.Outcome == VoteUndecided {
				break
			}
			var prev *records.Dispute
			if p, ok := recs.Dispute[c.d.Block]; ok {
				prev = &p
			}
			var silent []string
			if prev != nil {
				for _, p := range DisputeRerunners(*prev) {
					if !c.colludes[p] {
						silent = append(silent, p)
					}
				}
			}
			rec, ok := esc.NextRequest(c.id, c.d, prev, r, silent, PeerCandidates(c.procs), func(p string) bool { return !c.colludes[p] })
			if !ok {
				// Every honest re-runner asked answers now, late.
				for p := range honestIn {
					recs.Reruns[c.d.Block] = append(recs.Reruns[c.d.Block], records.Rerun{Block: c.d.Block, Hash: c.d.Hashes[0], Processor: p})
				}
				honestIn = map[string]bool{}
				continue
			}
			recs.Dispute[c.d.Block] = rec
			for _, p := range append(DisputeRerunners(rec), rec.Dropped...) {
				switch {
				case HasRerun(recs, c.d.Block, p):
				case c.colludes[p]:
					recs.Reruns[c.d.Block] = append(recs.Reruns[c.d.Block], records.Rerun{Block: c.d.Block, Hash: c.d.Hashes[1], Processor: p})
				default:
					honestIn[p] = true
				}
			}
		}
		if r := esc.RuleOf(recs, c.d); r.Outcome == VoteWon && r.Winner != c.d.Hashes[0] {
			t.Fatalf("seed %d: the liars won", seed)
		}
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
	rec, ok := esc.NextCheck(jobs.ID{1}, sc, nil, r, nil, PeerCandidates([]string{"p", "a", "b", "c"}), nil)
	if !ok {
		t.Fatal("no check written")
	}
	if rec.Thirds[0] == "" || rec.Thirds[1] == "" || rec.Thirds[0] == rec.Thirds[1] || slices.Contains(rec.Thirds[:], "p") {
		t.Fatalf("thirds %v", rec.Thirds)
	}
}

// TestEscalationGrowsWithTheJob: the margin is 17 up to a hundred checked
// blocks and one more for each factor of three beyond, MaxReruns 4 × it.
func TestEscalationGrowsWithTheJob(t *testing.T) {
	for _, c := range []struct{ checked, margin int }{
		{1, 17}, {100, 17}, {101, 18}, {300, 18}, {301, 19}, {900, 19}, {901, 20}, {10000, 22},
	} {
		e := EscalationForChecked(c.checked)
		if e.Margin != c.margin || e.MaxReruns != 4*c.margin {
			t.Errorf("%d checked blocks: %+v, want margin %d", c.checked, e, c.margin)
		}
		if err := e.Validate(); err != nil {
			t.Error(err)
		}
	}
}
