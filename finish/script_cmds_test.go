package finish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// runMicros writes p's results of MacroJob m's MicroJobs that which
// names (flags: lie, silent).
func (s *script) runMicros(p string, args map[string]string, flags []string) string {
	m, _ := strconv.Atoi(args["m"])
	var micros []jobs.MicroJob
	for i, mu := range s.plan.Macros[m].Micros {
		switch {
		case slices.Contains(flags, "regular") && !mu.Verifier,
			slices.Contains(flags, "verifier") && mu.Verifier,
			args["micro"] == strconv.Itoa(i):
			micros = append(micros, mu)
		}
	}
	lie, silent := slices.Contains(flags, "lie"), slices.Contains(flags, "silent")
	for _, mu := range micros {
		d := microjob.Disclosure{
			Version: microjob.RecordVersion, JobID: s.plan.JobID, MacroIndex: mu.Macro, MicroID: mu.ID,
			Processor: pid(p), Wallet: "0x" + strings.Repeat(hex.EncodeToString([]byte(p)), 20)[:40],
			BlockIndices: mu.Blocks, ResultCID: testCID(p + mu.ID.String()), Salt: [32]byte{1},
		}
		for _, b := range mu.Blocks {
			d.BlockHashes = append(d.BlockHashes, hash(b, lie))
		}
		c, err := d.Commitment()
		if err != nil {
			s.t.Fatal(err)
		}
		s.put(pid(p), records.CommitmentKey(c), records.CommitType, c.Encode())
		if !silent {
			s.put(pid(p), records.DisclosureKey(d), records.ResultType, d.Encode())
		}
	}
	return ""
}

// judge is the judgement of the records so far.
func (s *script) judge() (Judgement, *Records) {
	recs := FromRecords(s.plan.JobID, s.recs)
	recs.Candidates = s.cands
	j, err := JudgeWith(s.info, s.plan, recs, s.esc)
	if err != nil {
		s.t.Fatal(err)
	}
	return j, recs
}

func (s *script) dispute(by string, args map[string]string, exhausted bool) string {
	j, _ := s.judge()
	for _, d := range j.V.Disputes {
		s.putJSON(pid(by), records.DisputeKey(s.plan.JobID, d.Block, pid(by)), records.DisputeType,
			records.Dispute{Dispute: d, Third: pid(args["third"]), More: pids(args["more"]), Dropped: pids(args["dropped"]), Exhausted: exhausted})
	}
	return fmt.Sprintf("%d disputes", len(j.V.Disputes))
}

// escalate writes by's next request for each open dispute, as the
// processor does (Escalation.NextRequest), with the named re-runners in
// silent dropped and the re-runners the next of the rerun order over
// procs (those in unable asked dropped at once).
func (s *script) escalate(by string, args map[string]string) string {
	j, _ := s.judge()
	var b strings.Builder
	seen := map[uint64]bool{}
	for _, d := range j.V.Disputes {
		if seen[d.Block] {
			continue
		}
		seen[d.Block] = true
		r := s.esc.RuleOf(j.Recs, d)
		var prev *records.Dispute
		if p, ok := j.Recs.Dispute[d.Block]; ok {
			prev = &p
		}
		unable := func(p string) bool { return slices.Contains(pids(args["unable"]), p) }
		rec, ok := s.esc.NextRequest(s.plan.JobID, d, prev, r, pids(args["silent"]), PeerCandidates(pids(args["procs"])), unable)
		fmt.Fprintf(&b, "block %d: %s", d.Block, r.Outcome)
		if r.Outcome == VoteEscalate {
			fmt.Fprintf(&b, " ask=%d", r.Ask)
		}
		if !ok {
			b.WriteString(" nothing to write\n")
			continue
		}
		s.putJSON(pid(by), records.DisputeKey(s.plan.JobID, d.Block, pid(by)), records.DisputeType, rec)
		fmt.Fprintf(&b, " rerunners=%s dropped=%s exhausted=%t\n", names(DisputeRerunners(rec)), names(rec.Dropped), rec.Exhausted)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (s *script) check(by string, args map[string]string, exhausted bool) string {
	j, _ := s.judge()
	th := pids(args["thirds"])
	n := 0
	for _, sc := range SelfChecked(s.plan, j.V) {
		c := records.Check{Block: sc.Block, Processor: sc.Processor, Hash: sc.Hash, Thirds: [2]string{th[0], th[1]}, More: pids(args["more"]), Dropped: pids(args["dropped"]), Exhausted: exhausted}
		s.putJSON(pid(by), records.CheckKey(s.plan.JobID, sc.Block, pid(by)), records.CheckType, c)
		n++
	}
	return fmt.Sprintf("%d checks", n)
}

func (s *script) rerun(p string, args map[string]string, lie bool) string {
	b, _ := strconv.ParseUint(args["block"], 10, 64)
	h := hash(b, lie)
	s.putJSON(pid(p), records.RerunKey(s.plan.JobID, b, pid(p)), records.RerunType,
		records.Rerun{Block: b, Hash: hex.EncodeToString(h[:]), Processor: pid(p)})
	return ""
}

func (s *script) redo(by string, silent bool) string {
	d := s.decision(by, start)
	if silent {
		j, _ := s.judge()
		d.Redos = nil
		for m, ps := range SilentCommitters(s.plan, j.Recs, j.V) {
			d.Redos = append(d.Redos, records.Redo{Micro: m, Exclude: ps})
		}
	}
	for _, rd := range d.Redos {
		m, _ := jobs.ParseHash(rd.Micro)
		s.putJSON(pid(by), records.RedoKey(s.plan.JobID, m, pid(by)), records.RedoType, rd)
	}
	return fmt.Sprintf("%d redos", len(d.Redos))
}

func (s *script) verdict(by string, args map[string]string) string {
	j, recs := s.judge()
	rec := VerdictFor(j, s.forgeLockers(FinalRounds(s.plan, recs), args["lockers"]))
	rec.Output = testCID("output").String()
	s.putJSON(pid(by), records.VerdictKey(s.plan.JobID, pid(by)), records.VerdictType, rec)
	return ""
}

// agree are the verdicts that follow from the records.
func (s *script) agree() []VerdictCand {
	j, recs := s.judge()
	agree, _ := WeighVerdicts(s.plan.JobID, recs, j, FinalRounds(s.plan, recs), j.Final(s.plan, nil), func(a Authored[[]byte]) VerdictCand {
		return LoadCand(context.Background(), a, nil)
	})
	return agree
}

// superseded withdraws self's verdict when Superseded says so (a
// tombstone in its place, as the processor writes).
func (s *script) superseded(self string) string {
	_, recs := s.judge()
	own, ok := Superseded(pid(self), recs, s.agree(), func(a Authored[[]byte]) VerdictCand {
		return LoadCand(context.Background(), a, nil)
	})
	if !ok {
		return "kept"
	}
	s.put(pid(self), own.Key, "", nil)
	s.recs[len(s.recs)-1].Tombstone = true
	return "withdrawn"
}

// propose writes a settlement proposal binding by's verdict (its result
// root and verifier hash), as a settler derives one.
func (s *script) propose(by string) string {
	_, recs := s.judge()
	i := slices.IndexFunc(recs.Verdicts, func(a Authored[[]byte]) bool { return a.Author == pid(by) })
	if i < 0 {
		return "no verdict of " + by
	}
	c := LoadCand(context.Background(), recs.Verdicts[i], nil)
	out, err := cid.Decode(c.Rec.Output)
	if err != nil {
		s.t.Fatal(err)
	}
	s.putJSON(pid(by), records.SettlementKey(s.plan.JobID), records.SettlementType, records.NewSettlementRecord(escrow.Settlement{
		ResultRoot: records.ResultRoot(out), VerifierHash: records.OutcomeDigest(c.V, c.Rec),
		Payees: []common.Address{{1}}, Amounts: []*big.Int{big.NewInt(1)}}))
	return ""
}

// decision is what Decide makes of the records for self at now.
func (s *script) decision(self string, now time.Time) Decision {
	j, recs := s.judge()
	agree := s.agree()
	d := Decide(Input{Judgement: j, Records: recs, Agree: len(agree) > 0, Self: pid(self), Complete: s.complete[pid(self)],
		Finalizing: s.heard, Now: now, Timing: Timing{DuplicateGrace: 3 * time.Second, RerunTimeout: 30 * time.Second, Takeover: 10 * time.Second, Limit: 2 * time.Minute}})
	return d
}

func (s *script) decide(self string, args map[string]string) string {
	now := s.at(args["at"])
	j, _ := s.judge()
	d := s.decision(self, now)
	if !d.Complete.IsZero() {
		s.complete[pid(self)] = d.Complete
	}
	var b strings.Builder
	fmt.Fprintf(&b, "verdict: complete=%t verified=%t disputes=%d missing=%d culprits=%s order=%s\n",
		j.V.Complete, j.V.Verified, len(j.V.Disputes), len(j.V.Missing), names(j.Culprits), names(j.Order))
	for _, u := range j.V.Undecided {
		fmt.Fprintf(&b, "undecided block %d: %s\n", u.Dispute.Block, u.Reason)
	}
	fmt.Fprintf(&b, "%s", d.Step)
	if !d.Until.IsZero() {
		fmt.Fprintf(&b, " until=%s", d.Until.Sub(start))
	}
	if len(d.Redos) > 0 {
		fmt.Fprintf(&b, " redos=%d exclude=%s", len(d.Redos), names(d.Redos[0].Exclude))
	}
	if d.Step == Rerun {
		var bs []string
		for _, x := range d.Disputes {
			bs = append(bs, strconv.FormatUint(x.Block, 10))
		}
		fmt.Fprintf(&b, " blocks=[%s]", strings.Join(bs, ","))
	}
	if d.Step == Check {
		fmt.Fprintf(&b, " settled=%t", ChecksSettled(s.plan, j.V, j.Recs, pids(args["procs"])))
	}
	if silent := SilentCommitters(s.plan, j.Recs, j.V); d.Silent && len(silent) > 0 {
		var ps []string
		for _, p := range silent {
			ps = append(ps, p...)
		}
		slices.Sort(ps)
		fmt.Fprintf(&b, " silent=%s", names(slices.Compact(ps)))
	}
	return b.String()
}

func (s *script) choose(args map[string]string) string {
	c, err := ChooseVerdict(context.Background(), VerdictQuery{Info: s.info, Records: s.recs, Processors: pids(args["procs"])})
	if errors.Is(err, ErrNoVerdict) {
		return "no verdict"
	}
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("%s's verdict: verified=%t culprits=%s", name(c.Author), c.Verdict.Verified, names(c.Record.Culprits))
}

// rule applies the dispute rule to a dispute between a right and a
// wrong hash: asked re-runners, of which those in votes (r: right, w:
// wrong, o: a third hash) answered and silent more were dropped.
func (s *script) rule(args map[string]string, exhausted bool) string {
	hashes := map[string]string{"r": "right", "w": "wrong", "o": "other"}
	hexOf := func(n string) string {
		h := sha256.Sum256([]byte(hashes[n]))
		return hex.EncodeToString(h[:])
	}
	d := microjob.Dispute{Block: 1, Processors: [2]string{"p", "q"}, Hashes: [2]string{hexOf("r"), hexOf("w")}}
	var votes []microjob.Vote
	if args["votes"] != "" {
		for i, n := range strings.Split(args["votes"], ",") {
			votes = append(votes, microjob.Vote{Processor: fmt.Sprintf("v%02d", i), Hash: hexOf(n)})
		}
	}
	asked, _ := strconv.Atoi(args["asked"])
	silent, _ := strconv.Atoi(args["silent"])
	r := s.esc.Rule(d, asked, votes, silent, exhausted)
	var b strings.Builder
	b.WriteString(r.Outcome.String())
	for _, t := range r.Tally {
		for n := range hashes {
			if hexOf(n) == t.Hash {
				fmt.Fprintf(&b, " %s=%d", hashes[n], t.Votes)
			}
		}
	}
	switch r.Outcome {
	case VoteWon:
		for n := range hashes {
			if hexOf(n) == r.Winner {
				fmt.Fprintf(&b, " winner=%s", hashes[n])
			}
		}
	case VoteEscalate:
		fmt.Fprintf(&b, " ask=%d", r.Ask)
	case VoteUndecided:
		fmt.Fprintf(&b, " (%s)", r.Reason)
	}
	return b.String()
}

// order prints the rerun order of block for a request of kind (dispute,
// check) over the candidates, less the sides.
func (s *script) order(args map[string]string) string {
	block, _ := strconv.ParseUint(args["block"], 10, 64)
	kind := records.DisputeType
	if args["kind"] == "check" {
		kind = records.CheckType
	}
	var out []string
	for _, sl := range RerunOrder(s.plan.JobID, kind, block, s.cands, pids(args["sides"])) {
		out = append(out, sl.Key)
	}
	return names(out)
}
