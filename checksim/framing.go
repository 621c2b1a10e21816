package checksim

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// Framing odds: K of a mesh's P processors collude and always give one
// identical wrong hash. A dispute between an honest processor and one of
// them is settled by re-runners drawn uniformly without replacement from
// the P − 2 others (K − 1 colluders among them), in the rounds
// finish.NextRequest draws, every one answering (none falls silent) in
// the order drawn; a self-checked block of
// an honest processor by re-runners from the P − 1 others (all K
// colluders among them), in the rounds finish.NextCheck draws. Framing
// computes, exactly, how often the honest hash loses (its processor is
// named a culprit) or no hash wins (nobody is named), by walking every
// reachable vote state and asking the protocol's own rule at each
// (finish.Escalation.Rule, finish.Escalation.CheckRuling), so that odds
// of 10⁻¹² come out as exact as odds of 10⁻¹, far below what sampling
// could resolve.
//
// Per job: each dispute is over one verifier block (the verifier's hash
// against its regular counterpart's), and a block whose two results are
// one honest processor's is self-checked instead, so a MacroJob puts at
// most K' votes between an honest processor and colluders at stake; the
// colluders reach K' disputes when one of them runs the verifier and
// honest processors ran every checked MicroJob, or the converse. An
// honest processor is then framed in
// a job of M MacroJobs with probability at most
// 1 − (1 − max(dispute, self-check))^(K'·M).

// maxFramingReruns bounds Escalation.MaxReruns for Framing: the vote
// states it walks grow with its cube.
const maxFramingReruns = 200

// FramingConfig is one mesh whose colluders try to frame an honest
// processor. Zero fields take their defaults in Framing.
type FramingConfig struct {
	Processors int // P; default 400
	Colluders  int // K of the P, who give one identical wrong hash; default P/4
	// Escalation is the dispute rule; default the protocol's for a job of
	// K'·MacroJobs checked blocks (finish.EscalationForChecked).
	Escalation finish.Escalation
	// KVerifier is K', the verifier blocks of a MacroJob: the most votes
	// between an honest processor and colluders it puts at stake; default
	// min(K, N) of the plan defaults (10).
	KVerifier uint32
	MacroJobs int // MacroJobs per job; default 10
}

// DefaultFramingConfig returns a FramingConfig with every default filled
// in.
func DefaultFramingConfig() FramingConfig {
	var c FramingConfig
	c.applyDefaults()
	return c
}

func (c *FramingConfig) applyDefaults() {
	if c.Processors == 0 {
		c.Processors = 400
	}
	if c.Colluders == 0 {
		c.Colluders = c.Processors / 4
	}
	if c.KVerifier == 0 {
		c.KVerifier = min(jobs.DefaultBlocksPerMicro, jobs.DefaultMicroJobsPerMacro)
	}
	if c.MacroJobs == 0 {
		c.MacroJobs = 10
	}
	if c.Escalation == (finish.Escalation{}) {
		c.Escalation = finish.EscalationForChecked(int(c.KVerifier) * c.MacroJobs)
	}
}

// Validate reports every field out of its range, joined.
func (c FramingConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if c.Processors < 3 {
		bad("%d processors, want at least 3: two sides and a re-runner", c.Processors)
	}
	if c.Colluders < 1 || c.Colluders >= c.Processors {
		bad("%d colluders of %d processors, want 1..%d: one side colludes, the other is honest", c.Colluders, c.Processors, c.Processors-1)
	}
	if err := c.Escalation.Validate(); err != nil {
		bad("%v", err)
	}
	if c.Escalation.MaxReruns > maxFramingReruns {
		bad("at most %d re-runners, want at most %d", c.Escalation.MaxReruns, maxFramingReruns)
	}
	if c.KVerifier < 1 || c.KVerifier > jobs.MaxMicroJobsPerMacro {
		bad("K' %d not in 1..%d", c.KVerifier, jobs.MaxMicroJobsPerMacro)
	}
	if c.MacroJobs < 1 {
		bad("%d MacroJobs, want at least 1", c.MacroJobs)
	}
	return errors.Join(errs...)
}

// Odds are how one vote ends for the honest processor at stake.
type Odds struct {
	Framed    float64 // the colluders' hash wins: the honest processor is named a culprit
	Undecided float64 // no hash wins: nobody is named
	Reruns    float64 // expected re-runners asked
}

// FramingReport is what Framing computes for one mesh.
type FramingReport struct {
	Config FramingConfig // with its defaults
	// Dispute is a dispute between an honest processor and a colluder.
	Dispute Odds
	// SelfCheck is a self-checked block of an honest processor.
	SelfCheck Odds
}

// PerBlock is the most likely way to frame an honest processor on one
// verifier block: the greater of Dispute.Framed and SelfCheck.Framed.
func (r FramingReport) PerBlock() float64 {
	return max(r.Dispute.Framed, r.SelfCheck.Framed)
}

// PerJob bounds the probability that an honest processor is framed in a
// job of macros MacroJobs: 1 − (1 − PerBlock)^(K'·macros).
func (r FramingReport) PerJob(macros int) float64 {
	n := float64(r.Config.KVerifier) * float64(macros)
	return -math.Expm1(n * math.Log1p(-r.PerBlock()))
}

// Framing computes how often K colluders of P frame an honest processor
// in a dispute and in a self-check under cfg's rule, exactly: it walks
// every vote state the draws can reach.
func Framing(cfg FramingConfig) (FramingReport, error) {
	cfg.applyDefaults()
	if err := cfg.Validate(); err != nil {
		return FramingReport{}, err
	}
	rep := FramingReport{Config: cfg}
	var err error
	d := disputeWalk(cfg)
	if rep.Dispute, err = d.odds(); err != nil {
		return FramingReport{}, fmt.Errorf("checksim: dispute: %w", err)
	}
	sc := selfCheckWalk(cfg)
	if rep.SelfCheck, err = sc.odds(); err != nil {
		return FramingReport{}, fmt.Errorf("checksim: self-check: %w", err)
	}
	return rep, nil
}

// Hashes of the framing walks: the honest one and the colluders' one.
var (
	rightHash = framingHash("right")
	wrongHash = framingHash("wrong")
)

func framingHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// state is where a vote stands: honest and colluding re-runners that
// answered, re-runners asked (named), and whether the pool ran dry.
type state struct {
	honest, colluders, asked int
	exhausted                bool
}

// walk is one kind of vote the colluders try to win, over a pool of
// re-runners.
type walk struct {
	honest, colluders int // in the pool of re-runners
	minRound          int // fewest re-runners a request may name
	// rule is the protocol's ruling at s.
	rule func(s state) finish.Ruling
	memo map[state]Odds
}

// disputeWalk is a dispute between an honest processor and a colluder:
// the pool is the P − 2 others.
func disputeWalk(cfg FramingConfig) *walk {
	d := microjob.Dispute{Block: 1, Processors: [2]string{"honest", "colluder"}, Hashes: [2]string{rightHash, wrongHash}}
	return &walk{
		honest: cfg.Processors - cfg.Colluders - 1, colluders: cfg.Colluders - 1, minRound: 1,
		rule: func(s state) finish.Ruling {
			return cfg.Escalation.Rule(d, s.asked, votes(s), 0, s.exhausted)
		},
	}
}

// selfCheckWalk is a self-checked block of an honest processor: the pool
// is the P − 1 others, and a check names two re-runners at least
// (records.Check.Thirds).
func selfCheckWalk(cfg FramingConfig) *walk {
	sc := finish.SelfCheck{Block: 1, Processor: "honest", Hash: rightHash}
	return &walk{
		honest: cfg.Processors - cfg.Colluders - 1, colluders: cfg.Colluders, minRound: 2,
		rule: func(s state) finish.Ruling {
			recs := finish.NewRecords()
			if s.asked > 0 {
				named := rerunners(s)
				for _, v := range votes(s) {
					recs.Reruns[sc.Block] = append(recs.Reruns[sc.Block], records.Rerun{Block: sc.Block, Hash: v.Hash, Processor: v.Processor})
				}
				recs.Checks[sc.Block] = records.Check{
					Block: sc.Block, Processor: sc.Processor, Hash: sc.Hash,
					Thirds: [2]string{named[0], named[1]}, More: named[2:], Exhausted: s.exhausted,
				}
			}
			return cfg.Escalation.CheckRuling(recs, sc)
		},
	}
}

// Names of the re-runners of a walk, by kind: at most maxFramingReruns
// of each are ever named.
var honestNames, colluderNames, pendingNames = rerunnerNames("honest"), rerunnerNames("colluder"), rerunnerNames("pending")

func rerunnerNames(kind string) []string {
	out := make([]string, maxFramingReruns)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%03d", kind, i)
	}
	return out
}

// votes are the answers at s: the honest re-runners' and the colluders'.
func votes(s state) []microjob.Vote {
	out := make([]microjob.Vote, 0, s.honest+s.colluders)
	for _, p := range honestNames[:s.honest] {
		out = append(out, microjob.Vote{Processor: p, Hash: rightHash})
	}
	for _, p := range colluderNames[:s.colluders] {
		out = append(out, microjob.Vote{Processor: p, Hash: wrongHash})
	}
	return out
}

// rerunners are the re-runners named at s: those that answered, then
// those yet to answer.
func rerunners(s state) []string {
	out := make([]string, 0, s.asked)
	out = append(out, honestNames[:s.honest]...)
	out = append(out, colluderNames[:s.colluders]...)
	return append(out, pendingNames[:s.asked-s.honest-s.colluders]...)
}

// odds walks the vote from its start, before any re-runner is asked.
func (w *walk) odds() (Odds, error) {
	w.memo = map[state]Odds{}
	return w.from(state{})
}

// from is the odds of the vote from s. A pending vote takes its next
// answer: a colluder's with the colluders' share of the re-runners not
// yet drawn (drawn and answering one at a time, so that a vote decided
// before its round has answered ends there). An escalating one names its
// round, as finish's rounds do: the round's Ask, or what is left of the
// pool, which then is exhausted.
func (w *walk) from(s state) (Odds, error) {
	if o, ok := w.memo[s]; ok {
		return o, nil
	}
	r := w.rule(s)
	var (
		o   Odds
		err error
	)
	switch r.Outcome {
	case finish.VoteWon:
		o.Reruns = float64(s.asked)
		if r.Winner != rightHash {
			o.Framed = 1
		}
	case finish.VoteUndecided:
		o = Odds{Undecided: 1, Reruns: float64(s.asked)}
	case finish.VotePending:
		o, err = w.answer(s)
	case finish.VoteEscalate:
		o, err = w.escalate(s, r.Ask)
	default:
		err = fmt.Errorf("ruling %v at %+v", r.Outcome, s)
	}
	if err != nil {
		return Odds{}, err
	}
	w.memo[s] = o
	return o, nil
}

// answer is the odds from pending state s: the next named re-runner
// answers.
func (w *walk) answer(s state) (Odds, error) {
	h, c := w.honest-s.honest, w.colluders-s.colluders
	if h+c == 0 || s.honest+s.colluders >= s.asked {
		return Odds{}, fmt.Errorf("pending with nobody to answer at %+v", s)
	}
	var o Odds
	for _, next := range []struct {
		p float64
		s state
	}{
		{float64(h) / float64(h+c), state{s.honest + 1, s.colluders, s.asked, s.exhausted}},
		{float64(c) / float64(h+c), state{s.honest, s.colluders + 1, s.asked, s.exhausted}},
	} {
		if next.p == 0 {
			continue
		}
		n, err := w.from(next.s)
		if err != nil {
			return Odds{}, err
		}
		o.Framed += next.p * n.Framed
		o.Undecided += next.p * n.Undecided
		o.Reruns += next.p * n.Reruns
	}
	return o, nil
}

// escalate is the odds from state s whose ruling asks ask more
// re-runners. A round names minRound in all at least (finish.NextCheck);
// a pool too small for that leaves the request unwritten: the vote
// stalls, and nobody is named.
func (w *walk) escalate(s state, ask int) (Odds, error) {
	if ask < 1 || s.exhausted {
		return Odds{}, fmt.Errorf("escalating by %d at %+v", ask, s)
	}
	ask = max(ask, w.minRound-s.asked)
	left := w.honest + w.colluders - s.asked
	next := s
	next.asked += min(ask, left)
	next.exhausted = ask > left
	if next.asked < w.minRound {
		return Odds{Undecided: 1, Reruns: float64(s.asked)}, nil
	}
	return w.from(next)
}

// FramingGoal is the most an honest processor may be framed with per
// job, at a colluding share of at most 1/4.
const FramingGoal = 1e-6

// FramingShares are the colluding shares K/P of FramingGrid, as
// numerator and denominator.
var FramingShares = [][2]int{{1, 8}, {1, 4}, {1, 3}, {1, 2}}

// FramingSizes are the mesh sizes P of FramingGrid.
var FramingSizes = []int{8, 16, 40, 100, 400}

// FramingGrid computes Framing for base at every mesh size of sizes and
// share of shares: K = P·share rounded down, at least 1.
func FramingGrid(base FramingConfig, sizes []int, shares [][2]int) ([]FramingReport, error) {
	var out []FramingReport
	for _, p := range sizes {
		for _, s := range shares {
			c := base
			c.Processors, c.Colluders = p, max(1, p*s[0]/s[1])
			r, err := Framing(c)
			if err != nil {
				return nil, fmt.Errorf("%d colluders of %d processors: %w", c.Colluders, p, err)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// FramingTable is reps as an aligned text table, one line a report: the
// dispute's framing and undecided odds and expected re-runners, the
// self-check's framing odds, and the framing odds per MacroJob and per job
// of the config's MacroJobs, each marked with whether it meets
// FramingGoal.
func FramingTable(reps []FramingReport) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "P\tK\tK/P\tMARGIN\tFRAMED/DISPUTE\tUNDECIDED/DISPUTE\tRE-RUNS/DISPUTE\tFRAMED/SELF-CHECK\tFRAMED/MACROJOB\tMACROJOBS\tFRAMED/JOB")
	goal := func(p float64) string {
		if p <= FramingGoal {
			return fmt.Sprintf("%.3g ok", p)
		}
		return fmt.Sprintf("%.3g over", p)
	}
	for _, r := range reps {
		c := r.Config
		fmt.Fprintf(tw, "%d\t%d\t%.3f\t%d/%d\t%.3g\t%.3g\t%.1f\t%.3g\t%s\t%d\t%s\n",
			c.Processors, c.Colluders, float64(c.Colluders)/float64(c.Processors), c.Escalation.Margin, c.Escalation.MaxReruns,
			r.Dispute.Framed, r.Dispute.Undecided, r.Dispute.Reruns, r.SelfCheck.Framed,
			goal(r.PerJob(1)), c.MacroJobs, goal(r.PerJob(c.MacroJobs)))
	}
	tw.Flush()
	return b.String()
}
