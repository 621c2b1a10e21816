package meshview

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/settlement"
)

// Settlements reads what the chain says of a settled job: its release
// and when the block that holds it was made. *escrow.Client is one.
type Settlements interface {
	Released(ctx context.Context, key common.Hash) (*escrow.Release, escrow.Job, error)
	BlockTime(ctx context.Context, block uint64) (time.Time, error)
}

var _ Settlements = (*escrow.Client)(nil)

// summaryRetry is how long a job whose summary did not check (not
// released yet as far as this node's chain client sees, or a summary that
// says something else than the chain) waits before it is read again.
const summaryRetry = 10 * time.Second

// settledJobs returns, on a mesh with a chain, the latest HistoryJobs of
// the jobs among ids that are settled, in replay order (docs/PROTOCOL.md
// "QoS task outcomes"): those with an outcome summary in the mesh store
// that checks against their release on chain (settlement.ReadSummary), at
// the release block's time, ties by job ID. Participants and bystanders
// read the same summaries and the same chain, so they replay the same
// tasks in the same order, whether or not they hold the jobs' records. A
// job's outcome is read once and cached; a job without a summary that
// checks is looked at again after summaryRetry, so an open job costs a
// small query at most that often.
func (f *Facts) settledJobs(ctx context.Context, ids []jobs.ID) ([]*finishedJob, error) {
	now := f.p.Now()
	var done []*finishedJob
	for _, id := range ids {
		f.mu.Lock()
		j, retryAt := f.done[id], f.retry[id]
		f.mu.Unlock()
		if j == nil {
			if now.Before(retryAt) {
				continue
			}
			var err error
			if j, err = f.settled(ctx, id); err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				f.mu.Lock()
				f.retry[id] = now.Add(summaryRetry)
				f.mu.Unlock()
				continue
			}
			f.mu.Lock()
			f.done[id] = j
			delete(f.retry, id)
			f.mu.Unlock()
		}
		done = append(done, j)
	}
	return f.latest(done), nil
}

// SummarizedJobs lists the jobs with an outcome summary record in store,
// read by key alone: what a node without its own list of jobs passes to
// Facts.View on a mesh with a chain.
func SummarizedJobs(ctx context.Context, store RecordReader) ([]jobs.ID, error) {
	recs, err := store.QueryKeys(ctx, records.JobsPrefix, summaryKey)
	if err != nil {
		return nil, fmt.Errorf("meshview: listing outcome summaries: %w", err)
	}
	var out []jobs.ID
	for _, r := range recs {
		if id, ok := records.JobOf(r.Key); ok && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// errNotSettled: the job has no summary that checks against a release.
var errNotSettled = errors.New("meshview: no checked outcome summary")

// settled reads one settled job's tasks from its checked summary: each
// MacroJob of its rounds is one task (finish.TaskOutcome), at the time of
// the release's block.
func (f *Facts) settled(ctx context.Context, id jobs.ID) (*finishedJob, error) {
	sums, err := f.p.Store.Query(ctx, records.SummaryPrefix(id))
	if err != nil || len(sums) == 0 {
		return nil, fmt.Errorf("%w: job %s has no summary here (%v)", errNotSettled, id, err)
	}
	jr, err := f.p.Store.Get(ctx, records.JobKey(id))
	if err != nil {
		return nil, fmt.Errorf("meshview: job %s: %w", id, err)
	}
	info, err := jobs.Decode(jr.Payload)
	if err != nil || info.ID() != id {
		return nil, fmt.Errorf("meshview: job %s: the JobInfo record does not hold it", id)
	}
	rel, _, err := f.p.Settlements.Released(ctx, escrow.JobKey(common.Address(info.Creator), common.Hash(id)))
	if err != nil {
		return nil, err
	}
	if rel == nil {
		return nil, fmt.Errorf("%w: job %s is not released", errNotSettled, id)
	}
	s, ok := settlement.CheckedSummary(id, sums, rel)
	if !ok {
		return nil, fmt.Errorf("%w: job %s", errNotSettled, id)
	}
	at, err := f.p.Settlements.BlockTime(ctx, rel.Block)
	if err != nil {
		return nil, err
	}
	f.noteCulprits(s.Culprits)
	j := &finishedJob{id: id, at: at}
	for _, r := range s.RoundOrders() {
		j.tasks = append(j.tasks, finish.TaskOutcome(id, r))
	}
	return j, nil
}

// summaryKey reports whether key is an outcome summary's,
// /jobs/<id>/summary/<peer>.
func summaryKey(key string) bool {
	rest, ok := strings.CutPrefix(key, records.JobsPrefix+"/")
	if !ok {
		return false
	}
	parts := strings.Split(rest, "/")
	return len(parts) == 3 && parts[1] == "summary"
}
