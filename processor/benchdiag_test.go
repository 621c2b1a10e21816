package processor_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// judgeView judges the job on what the client's store holds, to say why
// a job did not finish: on the plan with its verifiers once the client's
// store shows the check seed (revealed, or lapsed as a processor would
// lapse it now), else on the public plan.
func judgeView(m *localmesh.Mesh, info *jobs.JobInfo) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	plan, err := jobs.Slice(info)
	if err != nil {
		return err.Error()
	}
	recs, err := client(m).Store.Query(ctx, records.JobKey(info.ID())+"/")
	if err != nil {
		return err.Error()
	}
	fr := finish.FromRecords(info.ID(), recs)
	checks := finish.ChooseChecks(info, plan, fr, finish.ProgressOf(fr, 1), time.Hour, 0)
	judged := plan
	if cp, err := finish.CheckedPlan(plan, checks); err == nil {
		judged = cp
	}
	var cs []microjob.Commitment
	var ds []microjob.Disclosure
	committed, disclosed := map[jobs.ID]bool{}, map[jobs.ID]bool{}
	types := map[string]int{}
	for _, r := range recs {
		types[r.Type]++
		switch r.Type {
		case records.CommitType:
			if c, err := records.OpenCommitment(r.Key, r.Author.String(), r.Payload); err == nil {
				cs = append(cs, c)
				committed[c.MicroID] = true
			}
		case records.ResultType:
			if d, err := records.OpenDisclosure(r.Key, r.Author.String(), r.Payload); err == nil {
				ds = append(ds, d)
				disclosed[d.MicroID] = true
			}
		}
	}
	v, err := microjob.Judge(info, judged, cs, ds)
	if err != nil {
		return fmt.Sprintf("records %v; checks %s; judge: %v", types, checks.Source, err)
	}
	reasons := map[string]int{}
	for _, in := range v.Invalid {
		reasons[in.Reason]++
	}
	return fmt.Sprintf("records %v; checks %s; missing %d, redo %d, disputes %d, invalid %d %v, complete %v, verified %v%s%s",
		types, checks.Source, len(v.Missing), len(v.Redo), len(v.Disputes), len(v.Invalid), reasons, v.Complete, v.Verified,
		lacking(ctx, m, judged, committed, "commitment", records.CommitKey), lacking(ctx, m, judged, disclosed, "disclosure", records.ResultKey))
}

// lacking says which MicroJobs of plan have no record of a kind at the
// client (not in have), the first few, and in how many of the mesh's
// stores each has one: none, it was never written; some, the client's
// store lags theirs.
func lacking(ctx context.Context, m *localmesh.Mesh, plan *jobs.Plan, have map[jobs.ID]bool, kind string, key func(jobs.ID, uint64, jobs.ID, string) string) string {
	var out []string
	n := 0
	for _, mac := range plan.Macros {
		for _, mu := range mac.Micros {
			if have[mu.ID] {
				continue
			}
			n++
			if len(out) == 5 {
				continue
			}
			in := 0
			for _, mem := range m.Running() {
				if rs, err := mem.Store.Query(ctx, key(plan.JobID, mac.Index, mu.ID, "")); err == nil && len(rs) > 0 {
					in++
				}
			}
			what := "regular"
			if mu.Verifier {
				what = "verifier"
			}
			out = append(out, fmt.Sprintf("%s %d/%s in %d stores%s", what, mac.Index, mu.ID.String()[:8], in, runners(m, plan.JobID, mac.Index, mu.Verifier)))
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d MicroJobs without a %s at the client: %s", n, kind, strings.Join(out, ", "))
}

// short is the last six characters of a peer ID.
func short(p string) string { return p[max(0, len(p)-6):] }

// runners says, for a verifier, whom the processors rank first to run it
// and how many rank each (they disagree when their views of the job
// differ), and the view of each processor named first: its own ranks,
// first owner, whether it committed the verifier, and when it drew the
// checks.

func runners(m *localmesh.Mesh, job jobs.ID, macro uint64, verifier bool) string {
	if !verifier {
		return ""
	}
	firsts := map[string]int{}
	views := map[string]string{}
	unranked := 0
	for _, mem := range processorsOf(m) {
		if mem.Worker == nil {
			continue
		}
		r, view, ok := mem.Worker.VerifierRanks(job, macro, 3)
		if !ok || len(r) == 0 {
			unranked++
			continue
		}
		firsts[r[0]]++
		shorts := make([]string, len(r))
		for i, p := range r {
			shorts[i] = short(p)
		}
		views[mem.Host.ID().String()] = fmt.Sprintf("ranks %v, %s", shorts, view)
	}
	// The own view of each processor that some rank first: the one that
	// ranks itself first should be running it.
	var b strings.Builder
	for p, k := range firsts {
		fmt.Fprintf(&b, "; %s, first for %d: ", short(p), k)
		if v, ok := views[p]; ok {
			b.WriteString(v)
		} else {
			b.WriteString("no ranks")
		}
	}
	return fmt.Sprintf(" (unranked at %d%s)", unranked, b.String())
}

// recordTypes counts the records of a job in the client's store by type.
func recordTypes(m *localmesh.Mesh, info *jobs.JobInfo) map[string]int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recs, err := client(m).Store.Query(ctx, records.JobKey(info.ID())+"/")
	if err != nil {
		return map[string]int{"error: " + err.Error(): 1}
	}
	types := map[string]int{}
	for _, r := range recs {
		types[r.Type]++
	}
	return types
}
