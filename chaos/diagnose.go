package chaos

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// diagnose says where a job that did not settle stands, as the client's
// store has it: how many MicroJobs are committed and disclosed, where the
// checks come from, what judging the records gives, and which verdict
// records exist. A stall report names its stage instead of a bare
// timeout.
func (r *run) diagnose(ctx context.Context, info *jobs.JobInfo) string {
	rs, err := r.client().Store.Query(ctx, records.JobKey(info.ID())+"/")
	if err != nil {
		return "records: " + err.Error()
	}
	plan, err := jobs.Slice(info)
	if err != nil {
		return "plan: " + err.Error()
	}
	recs := finish.FromRecords(info.ID(), rs)
	p := finish.ProgressOf(recs, 1)
	committed := 0
	for _, mac := range plan.Macros {
		for _, mu := range mac.Micros {
			if p.Committed(mu.ID) {
				committed++
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d regular MicroJobs committed, %d disclosures, %d verdict records",
		committed, plan.NumMicroJobs(), len(recs.Discl), count(rs, records.VerdictType))
	checks := finish.ChooseChecks(info, plan, recs, p, 0, time.Hour)
	fmt.Fprintf(&b, "; checks %s", checks.Source)
	checked, err := finish.CheckedPlan(plan, checks)
	if err != nil {
		return b.String()
	}
	j, err := finish.Judge(info, checked, recs)
	if err != nil {
		fmt.Fprintf(&b, "; judging: %v", err)
		return b.String()
	}
	v := j.V
	fmt.Fprintf(&b, "; judged: complete %v, verified %v, missing %d, redo %d, disputes %d, undecided %d, culprits %v; accepted requests: %d disputes, %d checks, %d redos",
		v.Complete, v.Verified, len(v.Missing), len(v.Redo), len(v.Disputes), len(v.Undecided), r.indices(j.Culprits),
		len(j.Recs.Dispute), len(j.Recs.Checks), len(j.Recs.Redo))
	return b.String()
}

// count counts the records of type typ in rs.
func count(rs []crdt.Record, typ string) int {
	n := 0
	for _, r := range rs {
		if r.Type == typ && !r.Tombstone {
			n++
		}
	}
	return n
}
