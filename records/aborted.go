package records

import (
	"context"
	"errors"
	"fmt"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
)

// AbortedVersion is the JobAborted schema version.
const AbortedVersion = 1

// AbortQueueFull is the reason of a job evicted because the open-job queue
// exceeded its cap α·N.
const AbortQueueFull = "queue-full"

// ErrNotAborted means a job has no JobAborted record.
var ErrNotAborted = errors.New("records: job not aborted")

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
	case AbortedKey(id) != key:
		return a, fmt.Errorf("%w: aborted record for %s under %q", ErrBadRecord, a.Job, key)
	}
	return a, nil
}

// ReadAborted reads a job's JobAborted record: ErrNotAborted when there is
// none, ErrBadRecord when it does not check.
func ReadAborted(ctx context.Context, store crdt.Reader, id jobs.ID) (JobAborted, error) {
	rec, err := store.Get(ctx, AbortedKey(id))
	if errors.Is(err, crdt.ErrNotFound) || (err == nil && rec.Tombstone) {
		return JobAborted{}, ErrNotAborted
	}
	if err != nil {
		return JobAborted{}, err
	}
	if rec.Type != AbortedType {
		return JobAborted{}, fmt.Errorf("%w: record type %q under %q", ErrBadRecord, rec.Type, rec.Key)
	}
	return DecodeJobAborted(rec.Key, rec.Payload)
}
