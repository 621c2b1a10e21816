package processor

import (
	"context"
	"errors"
	"fmt"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// AbortedVersion is the JobAborted schema version.
const AbortedVersion = 1

// AbortQueueFull is the reason of a job evicted because the open-job queue
// exceeded its cap α·N.
const AbortQueueFull = "queue-full"

// ErrNotAborted means a job has no JobAborted record.
var ErrNotAborted = errors.New("processor: job not aborted")

// JobAborted says the mesh dropped a job from its queue (Crynux
// TaskAborted): processors no longer take it, and its creator may take
// the escrow back with the contract's abort. Its content is a function of
// the job alone, so every node that writes it writes the same record.
type JobAborted struct {
	Version uint32 `json:"version"` // AbortedVersion
	Job     string `json:"job"`     // the job ID, lowercase hex
	Reason  string `json:"reason"`  // AbortQueueFull
}

// NewJobAborted is the record a node writes when it evicts job id.
func NewJobAborted(id jobs.ID) JobAborted {
	return JobAborted{Version: AbortedVersion, Job: id.String(), Reason: AbortQueueFull}
}

// DecodeJobAborted decodes and checks a JobAborted payload read from key
// (size limit MaxRecord, no unknown fields).
func DecodeJobAborted(key string, b []byte) (JobAborted, error) {
	var a JobAborted
	if err := decodeStrict(b, &a); err != nil {
		return a, err
	}
	switch id, err := jobs.ParseHash(a.Job); {
	case a.Version != AbortedVersion:
		return a, fmt.Errorf("%w: aborted record version %d", ErrBadRecord, a.Version)
	case err != nil:
		return a, fmt.Errorf("%w: aborted record job: %w", ErrBadRecord, err)
	case a.Reason != AbortQueueFull:
		return a, fmt.Errorf("%w: aborted record reason %q", ErrBadRecord, a.Reason)
	case records.AbortedKey(id) != key:
		return a, fmt.Errorf("%w: aborted record for %s under %q", ErrBadRecord, a.Job, key)
	}
	return a, nil
}

// ReadAborted reads a job's JobAborted record: ErrNotAborted when there is
// none, ErrBadRecord when it does not check.
func ReadAborted(ctx context.Context, store crdt.Reader, id jobs.ID) (JobAborted, error) {
	rec, err := store.Get(ctx, records.AbortedKey(id))
	if errors.Is(err, crdt.ErrNotFound) || (err == nil && rec.Tombstone) {
		return JobAborted{}, ErrNotAborted
	}
	if err != nil {
		return JobAborted{}, err
	}
	if rec.Type != records.AbortedType {
		return JobAborted{}, fmt.Errorf("%w: record type %q under %q", ErrBadRecord, rec.Type, rec.Key)
	}
	return DecodeJobAborted(rec.Key, rec.Payload)
}

// Evictions returns the jobs to abort so that the queued jobs fit the cap
// max(⌊α·live⌋, MinQueueLen), lowest task value first. queued are the open
// jobs nobody has started; the result is a pure function of them, cfg and
// live. A job whose value cannot be computed is never evicted (it already
// comes last in the job order).
func Evictions(cfg dispatch.Config, queued []dispatch.Job, live int) ([]dispatch.Job, error) {
	q, err := dispatch.NewQueue(cfg)
	if err != nil {
		return nil, err
	}
	for _, j := range queued {
		_ = q.Push(j)
	}
	return q.Trim(live), nil
}

// enforceCap aborts the lowest-value jobs when the queued jobs (unfinished,
// not aborted, no commitment yet) exceed the cap for the live processors
// of v. Any node may do it; each writes the same record, once.
func (w *Worker) enforceCap(ctx context.Context, v *View) {
	if v == nil {
		return
	}
	w.mu.Lock()
	var open []*jobState
	for _, js := range w.known {
		if !js.finished && !js.aborted {
			open = append(open, js)
		}
	}
	w.mu.Unlock()
	limit := max(int(w.cfg.Dispatch.QueueAlpha*float64(v.Live())), w.cfg.Dispatch.MinQueueLen)
	if len(open) <= limit {
		return
	}
	var queued []dispatch.Job
	for _, js := range open {
		started, err := w.committed(ctx, js.plan.JobID)
		if err != nil {
			return
		}
		if len(started) == 0 {
			queued = append(queued, DispatchJob(js.info, js.plan))
		}
	}
	evict, err := Evictions(w.cfg.Dispatch, queued, v.Live())
	if err != nil {
		return
	}
	for _, j := range evict {
		id, err := jobs.ParseHash(j.ID)
		if err != nil {
			continue
		}
		if _, err := ReadAborted(ctx, w.p.Store, id); err == nil {
			w.markAborted(id)
			continue
		}
		if err := crdt.PutJSON(ctx, w.p.Store, records.AbortedKey(id), records.AbortedType, NewJobAborted(id)); err != nil {
			w.log.Warn("writing a JobAborted record", "job", id, "err", err)
			continue
		}
		w.markAborted(id)
		w.m.aborted.Inc()
		w.log.Info("job aborted: the queue is over its cap", "job", id, "live", v.Live(), "queued", len(queued))
	}
}

// markAborted stops this processor from working on a job.
func (w *Worker) markAborted(id jobs.ID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if js := w.known[id]; js != nil && !js.aborted {
		js.aborted = true
		w.log.Info("job aborted", "job", id)
	}
}
