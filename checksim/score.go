package checksim

import (
	"encoding/hex"
	"slices"

	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// named is a processor a verdict or a self-check names, with the
// MicroJob it is named for ("" for a self-checked block, which names
// the block instead).
type named struct {
	processor string
	micro     string
	block     uint64
	check     bool
}

// selfChecks settles the verdict's self-checked blocks (finish.SelfChecked)
// as the finalizer would: re-runners asked among the other processors
// round after round in the block's rerun order (finish.Escalation.NextCheck,
// uniform over the processors since the job ID is random) until
// the vote is won or undecided (finish.Escalation.CheckRuling). A member
// re-runner repeats the coalition's lie. It returns the culprits named.
func (r *run) selfChecks(checked *jobs.Plan, v microjob.Verdict, row *Row) []named {
	var out []named
	esc := finish.EscalationFor(checked)
	recs := finish.NewRecords()
	procs := make([]string, len(r.s.procs))
	for i, p := range r.s.procs {
		procs[i] = p.name
	}
	for _, sc := range finish.SelfChecked(checked, v) {
		answered := map[string]bool{}
		var prev *records.Check
		for {
			rule := esc.CheckRuling(recs, sc)
			if rule.Outcome == finish.VoteWon || rule.Outcome == finish.VoteUndecided {
				break
			}
			rec, ok := esc.NextCheck(checked.JobID, sc, prev, rule, nil, finish.PeerCandidates(procs), nil)
			if !ok {
				break
			}
			recs.Checks[sc.Block], prev = rec, &rec
			for _, name := range finish.CheckRerunners(rec) {
				if answered[name] {
					continue
				}
				answered[name] = true
				h := output(sc.Block, r.s.member(r.s.index[name]) && r.view.Lied(sc.Block))
				recs.Reruns[sc.Block] = append(recs.Reruns[sc.Block], records.Rerun{Block: sc.Block, Hash: hex.EncodeToString(h[:]), Processor: name})
				row.ExtraBlocks++
			}
		}
		if culprit, done := esc.CheckOutcome(recs, sc); done && culprit != "" {
			out = append(out, named{processor: culprit, block: sc.Block, check: true})
		}
	}
	return out
}

// score counts, into row, the liar's lied MicroJobs and whether the
// verdict v or a self-check (checks) named it for each, and whether the
// job caught the coalition at all.
func (r *run) score(v microjob.Verdict, checks []named, row *Row) {
	names := checks
	for _, d := range v.Disputes {
		for i := range d.Processors {
			names = append(names, named{processor: d.Processors[i], micro: d.Micros[i]})
		}
	}
	for _, inv := range v.Invalid {
		names = append(names, named{processor: inv.Processor, micro: inv.MicroID})
	}
	liar := r.s.procs[0].name
	for _, mu := range r.lied {
		id := mu.ID.String()
		row.Micro.Of++
		if slices.ContainsFunc(names, func(n named) bool {
			return n.processor == liar && (n.micro == id || n.check && slices.Contains(mu.Blocks, n.block))
		}) {
			row.Micro.Caught++
		}
	}
	if slices.ContainsFunc(checks, func(n named) bool { return !r.s.member(r.s.index[n.processor]) }) {
		row.HonestNamed++
	}
	if !r.liedAny {
		return
	}
	row.Job.Of++
	if slices.ContainsFunc(names, func(n named) bool { return r.s.member(r.s.index[n.processor]) }) {
		row.Job.Caught++
	}
}
