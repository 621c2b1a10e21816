package meshview

import (
	"context"
	"errors"
	"fmt"
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

// settledJobs returns, on a mesh with a chain, the latest HistoryJobs
// settled jobs in replay order (docs/PROTOCOL.md "QoS replay"): every job
// with an outcome summary in the mesh store that checks against its
// release on chain (settlement.ReadSummary), at the release block's time,
// ties by job ID. Participants and bystanders read the same summaries and
// the same chain, so they replay the same tasks in the same order, whether
// or not they hold the job's records. A job's outcome is read once and
// cached; one that does not check yet is read again after summaryRetry.
func (f *Facts) settledJobs(ctx context.Context) ([]*finishedJob, error) {
	keys, err := f.p.Store.QueryKeys(ctx, records.JobsPrefix, summaryKey)
	if err != nil {
		return nil, fmt.Errorf("meshview: listing outcome summaries: %w", err)
	}
	now := f.p.Now()
	var done []*finishedJob
	seen := map[jobs.ID]bool{}
	for _, r := range keys {
		id, ok := records.JobOf(r.Key)
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		f.mu.Lock()
		j, retryAt := f.done[id], f.retry[id]
		f.mu.Unlock()
		if j == nil {
			if now.Before(retryAt) {
				continue
			}
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

// errNotSettled: the job has no summary that checks against a release.
var errNotSettled = errors.New("meshview: no checked outcome summary")

// settled reads one settled job's tasks from its checked summary: each
// MacroJob of its rounds is one task (finish.TaskOutcome), at the time of
// the release's block.
func (f *Facts) settled(ctx context.Context, id jobs.ID) (*finishedJob, error) {
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
	s, ok, err := settlement.ReadSummary(ctx, f.p.Store, id, rel)
	if err != nil {
		return nil, err
	}
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
