package checksim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// framing is Framing, failing t on an error.
func framing(t *testing.T, cfg FramingConfig) FramingReport {
	t.Helper()
	r, err := Framing(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d of %d, margin %d: dispute %+v, self-check %+v, per MacroJob %.3g, per job of %d %.3g",
		r.Config.Colluders, r.Config.Processors, r.Config.Escalation.Margin, r.Dispute, r.SelfCheck,
		r.PerJob(1), r.Config.MacroJobs, r.PerJob(r.Config.MacroJobs))
	return r
}

// TestFramingGoal: with the protocol's rule, a quarter of colluders frame
// an honest processor at most 10⁻⁶ per MacroJob, at 400 processors and
// in a mesh so large that each draw is a colluder with probability 1/4.
func TestFramingGoal(t *testing.T) {
	for _, p := range []int{400, 100000} {
		r := framing(t, FramingConfig{Processors: p})
		if got := r.PerJob(1); got > FramingGoal || got == 0 {
			t.Errorf("P %d: framed %.3g per MacroJob, want in (0, %g]", p, got, FramingGoal)
		}
	}
}

// TestFramingMarginForTenMacroJobs: a job of ten MacroJobs whose
// verifiers colluders all hold stays within the goal with the protocol's
// margin (17) in the largest meshes, and a margin of 15 does not reach it.
func TestFramingMarginForTenMacroJobs(t *testing.T) {
	for _, p := range []int{400, 100000} {
		if got := framing(t, FramingConfig{Processors: p}).PerJob(10); got > FramingGoal {
			t.Errorf("P %d: framed %.3g per job of ten MacroJobs, want at most %g", p, got, FramingGoal)
		}
	}
	narrow := framing(t, FramingConfig{Processors: 100000, Escalation: finish.Escalation{Margin: 15, MaxReruns: 60}})
	if got := narrow.PerJob(10); got <= FramingGoal {
		t.Errorf("margin 15: framed %.3g per job of ten MacroJobs, within the goal: the test cannot tell the margin", got)
	}
}

// TestFramingTellsAWeakRule: with a margin of 2 the same colluders frame
// an honest processor in most jobs.
func TestFramingTellsAWeakRule(t *testing.T) {
	r := framing(t, FramingConfig{Escalation: finish.Escalation{Margin: 2, MaxReruns: 8}})
	if got := r.PerJob(10); got <= 1e-3 {
		t.Errorf("margin 2: framed %.3g per job, want more than 1e-3", got)
	}
}

// TestFramingSmallMesh: in a mesh of 8 at most 6 re-runners answer a
// dispute, so no hash leads by the margin and the pool decides: 2
// colluders of 8 never win it (the honest hash has 2/3 of the votes), and
// 4 of 8 tie it, so it is undecided and nobody is named.
func TestFramingSmallMesh(t *testing.T) {
	two := framing(t, FramingConfig{Processors: 8, Colluders: 2})
	if two.Dispute.Framed != 0 || two.Dispute.Undecided != 0 || two.SelfCheck.Framed != 0 {
		t.Errorf("2 of 8: dispute %+v, want always won by the honest side", two.Dispute)
	}
	half := framing(t, FramingConfig{Processors: 8, Colluders: 4})
	if half.Dispute.Framed != 0 || half.Dispute.Undecided != 1 || half.SelfCheck.Framed != 0 {
		t.Errorf("4 of 8: dispute %+v, self-check %+v, want undecided and never framed", half.Dispute, half.SelfCheck)
	}
}

func TestFramingValidate(t *testing.T) {
	if err := DefaultFramingConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]FramingConfig{
		"two processors":    {Processors: 2, Colluders: 1},
		"no honest one":     {Processors: 8, Colluders: 8},
		"a narrow margin":   {Escalation: finish.Escalation{Margin: 1, MaxReruns: 4}},
		"too many re-runs":  {Escalation: finish.Escalation{Margin: 15, MaxReruns: maxFramingReruns + 1}},
		"negative macros":   {MacroJobs: -1},
		"too many verifier": {KVerifier: jobs.MaxMicroJobsPerMacro + 1},
	} {
		c.applyDefaults()
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
		if _, err := Framing(c); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: Framing: %v, want ErrConfig", name, err)
		}
	}
}

func TestFramingTable(t *testing.T) {
	reps, err := FramingGrid(DefaultFramingConfig(), FramingSizes, FramingShares)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != len(FramingSizes)*len(FramingShares) {
		t.Fatalf("%d reports", len(reps))
	}
	for _, r := range reps {
		if s := r.Dispute.Framed + r.Dispute.Undecided; s < 0 || s > 1+1e-9 {
			t.Errorf("%d of %d: framed and undecided add up to %g", r.Config.Colluders, r.Config.Processors, s)
		}
		// Up to 16 processors the margin is out of reach and the pool
		// decides: at a share of at most 1/2 an honest side holds its 2/3
		// or ties, so it is never framed.
		if r.Config.Processors <= 16 && r.PerBlock() != 0 {
			t.Errorf("%d of %d: framed %g per block, want 0", r.Config.Colluders, r.Config.Processors, r.PerBlock())
		}
	}
	table := FramingTable(reps)
	if lines := strings.Count(table, "\n"); lines != len(reps)+1 {
		t.Errorf("%d lines:\n%s", lines, table)
	}
	t.Log("\n" + table)
}

// TestFramingAgreesWithSampling: the exact odds lie inside the 95%
// intervals of disputes and self-checks settled by the finalizer's own
// code (finish.NextRequest and RuleOf, NextCheck and CheckRuling) with
// random draws: a pool the margin reaches, and one it exhausts.
func TestFramingAgreesWithSampling(t *testing.T) {
	const n = 4000
	rng := rand.New(rand.NewPCG(21, 6))
	for _, cfg := range []FramingConfig{
		{Processors: 40, Colluders: 13, Escalation: finish.Escalation{Margin: 4, MaxReruns: 16}},
		{Processors: 16, Colluders: 6, Escalation: finish.Escalation{Margin: 5, MaxReruns: 20}},
	} {
		r := framing(t, cfg)
		cfg = r.Config
		var dispute, check, disputeUndecided, checkUndecided Rate
		for range n {
			m := newMesh(rng, cfg)
			won, undecided := m.dispute(t, cfg.Escalation)
			tally(&dispute, &disputeUndecided, won, undecided)
			won, undecided = m.selfCheck(t, cfg.Escalation)
			tally(&check, &checkUndecided, won, undecided)
		}
		what := fmt.Sprintf("%d of %d, margin %d", cfg.Colluders, cfg.Processors, cfg.Escalation.Margin)
		within(t, what+": dispute framed", dispute, r.Dispute.Framed)
		within(t, what+": dispute undecided", disputeUndecided, r.Dispute.Undecided)
		within(t, what+": self-check framed", check, r.SelfCheck.Framed)
		within(t, what+": self-check undecided", checkUndecided, r.SelfCheck.Undecided)
	}
}

// tally counts one vote: framed when the colluders won, undecided when
// nobody did.
func tally(framed, undecided *Rate, colludersWon, none bool) {
	framed.Of++
	undecided.Of++
	if colludersWon {
		framed.Caught++
	}
	if none {
		undecided.Caught++
	}
}

// mesh is P named processors of which some collude, and one honest
// processor and one colluder to put at stake.
type mesh struct {
	rng              *rand.Rand
	procs            []string
	colludes         map[string]bool
	honest, colluder string
}

func newMesh(rng *rand.Rand, cfg FramingConfig) mesh {
	m := mesh{rng: rng, colludes: map[string]bool{}}
	for i := range cfg.Processors {
		m.procs = append(m.procs, fmt.Sprintf("p%03d-%08x", i, rng.Uint32()))
	}
	slices.Sort(m.procs)
	for i, j := range rng.Perm(cfg.Processors) {
		switch {
		case i < cfg.Colluders:
			m.colludes[m.procs[j]] = true
			m.colluder = m.procs[j]
		default:
			m.honest = m.procs[j]
		}
	}
	return m
}

// answer stores the re-runs of block by the named that have none yet.
func (m mesh) answer(recs *finish.Records, block uint64, named []string) {
	for _, p := range named {
		if !finish.HasRerun(recs, block, p) {
			h := rightHash
			if m.colludes[p] {
				h = wrongHash
			}
			recs.Reruns[block] = append(recs.Reruns[block], records.Rerun{Block: block, Hash: h, Processor: p})
		}
	}
}

// dispute settles a dispute between m.honest and m.colluder as a
// finalizer does, every re-runner answering: whether the colluders'
// hash won, and whether none did.
func (m mesh) dispute(t *testing.T, esc finish.Escalation) (colludersWon, undecided bool) {
	id := jobs.ID{byte(m.rng.Uint32())}
	d := microjob.Dispute{Block: 9, Processors: [2]string{m.honest, m.colluder}, Hashes: [2]string{rightHash, wrongHash}}
	recs := finish.NewRecords()
	for {
		r := esc.RuleOf(recs, d)
		switch r.Outcome {
		case finish.VoteWon:
			return r.Winner != rightHash, false
		case finish.VoteUndecided:
			return false, true
		}
		var prev *records.Dispute
		if p, ok := recs.Dispute[d.Block]; ok {
			prev = &p
		}
		rec, ok := esc.NextRequest(id, d, prev, r, nil, finish.PeerCandidates(m.procs), nil)
		if !ok {
			t.Fatalf("no dispute request after %+v", r)
		}
		recs.Dispute[d.Block] = rec
		m.answer(recs, d.Block, finish.DisputeRerunners(rec))
	}
}

// selfCheck settles a self-check of m.honest's block as a finalizer does:
// whether the colluders' hash won, and whether none did (a check the
// finalizer cannot write stays undecided).
func (m mesh) selfCheck(t *testing.T, esc finish.Escalation) (colludersWon, undecided bool) {
	id := jobs.ID{byte(m.rng.Uint32())}
	sc := finish.SelfCheck{Block: 9, Processor: m.honest, Hash: rightHash}
	recs := finish.NewRecords()
	for {
		r := esc.CheckRuling(recs, sc)
		switch r.Outcome {
		case finish.VoteWon:
			return r.Winner != rightHash, false
		case finish.VoteUndecided:
			return false, true
		}
		var prev *records.Check
		if c, ok := recs.Checks[sc.Block]; ok {
			prev = &c
		}
		rec, ok := esc.NextCheck(id, sc, prev, r, nil, finish.PeerCandidates(m.procs), nil)
		if !ok {
			if prev == nil {
				return false, true
			}
			t.Fatalf("no check after %+v", r)
		}
		recs.Checks[sc.Block] = rec
		m.answer(recs, sc.Block, finish.CheckRerunners(rec))
	}
}

// TestFramingGoalHoldsForLargeJobs: the protocol's margin grows with the
// job's checked blocks (finish.EscalationFor), so a job of a hundred or
// a thousand MacroJobs stays within the goal in a large mesh with a
// quarter colluding, where the margin of a ten-MacroJob job would not.
func TestFramingGoalHoldsForLargeJobs(t *testing.T) {
	for _, macros := range []int{100, 1000} {
		r := framing(t, FramingConfig{Processors: 100000, MacroJobs: macros})
		if got := r.PerJob(macros); got > FramingGoal {
			t.Errorf("%d MacroJobs (margin %d): framed %.3g per job, want at most %g", macros, r.Config.Escalation.Margin, got, FramingGoal)
		}
		base := framing(t, FramingConfig{Processors: 100000, MacroJobs: macros, Escalation: finish.DefaultEscalation()})
		if got := base.PerJob(macros); got <= FramingGoal {
			t.Errorf("%d MacroJobs at margin 17: framed %.3g per job, within the goal: the test cannot tell the rule", macros, got)
		}
	}
}
