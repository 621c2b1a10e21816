package processor

import (
	"context"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// VerdictFromRecords is, for the tests outside the package, the verdict
// record (without its output) that a finalizer holding store's records
// of job info writes, and whether its judgement is final there.
func VerdictFromRecords(ctx context.Context, store *crdt.Store, info *jobs.JobInfo) (records.VerdictRecord, bool, error) {
	plan, err := jobs.Slice(info)
	if err != nil {
		return records.VerdictRecord{}, false, err
	}
	rs, err := store.Query(ctx, records.JobKey(info.ID())+"/")
	if err != nil {
		return records.VerdictRecord{}, false, err
	}
	recs := newJobRecords()
	for _, r := range rs {
		recs.add(info.ID(), openPart(info.ID(), r))
	}
	j, err := judgeRecords(info, plan, recs)
	if err != nil {
		return records.VerdictRecord{}, false, err
	}
	procs, err := Processors(ctx, store)
	if err != nil {
		return records.VerdictRecord{}, false, err
	}
	return verdictFor(j, finalRounds(plan, recs)), j.final(plan, procs), nil
}
