package records

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/wasm"
)

// FailureVersion is the FailureReport schema version.
const FailureVersion = 1

// MaxFailureStderr bounds a failure report's stderr excerpt: the
// sandbox's default stderr cap (wasm.Config.MaxStderrBytes).
const MaxFailureStderr = 4 << 10

// Failure kinds: how a MicroJob's run failed, in a way every processor
// meets again with the same code and input.
const (
	FailInvalidModule  = "invalid-module"
	FailTrap           = "trap"
	FailExit           = "exit"
	FailMemoryLimit    = "memory-limit"
	FailOutputTooLarge = "output-too-large"
	FailTimeout        = "timeout"
	// FailNoProcessor is no report's kind: the reason of a job that no
	// processor joined before its deadline (shown by its creator's node).
	FailNoProcessor = "no-eligible-processor"
)

// failKinds are the kinds a FailureReport may name.
var failKinds = map[string]bool{
	FailInvalidModule: true, FailTrap: true, FailExit: true, FailMemoryLimit: true,
	FailOutputTooLarge: true, FailTimeout: true,
}

// FailureReport says that its author's run of one MicroJob of a job
// failed deterministically. Each processor keeps one per job, under
// FailureKey: it names the failed MicroJob with the lowest ID the
// processor has met, so that the reports of processors that ran different
// MicroJobs first come to name the same one.
type FailureReport struct {
	Version uint32 `json:"version"` // FailureVersion
	Job     string `json:"job"`     // the job ID, lowercase hex
	Micro   string `json:"micro"`   // the MicroJob that failed, lowercase hex
	Kind    string `json:"kind"`    // one of the Fail* kinds but FailNoProcessor
	// ExitCode is the module's exit code, for kind FailExit only.
	ExitCode uint32 `json:"exitCode,omitempty"`
	// Stderr is the start of what the module wrote to stderr, at most
	// MaxFailureStderr bytes of UTF-8.
	Stderr string `json:"stderr,omitempty"`
}

// Failure is what a failed run tells (FailureOf): the kind, the exit code
// and the stderr excerpt.
type Failure struct {
	Kind     string
	ExitCode uint32
	Stderr   string
}

// FailureOf classifies a run's error: ok is false for errors that say
// nothing about the job (cancelled, executor closed, inputs not
// fetched), which are no failure.
func FailureOf(err error) (Failure, bool) {
	var exit *wasm.ExitError
	f := Failure{Stderr: truncUTF8(wasm.Stderr(err), MaxFailureStderr)}
	switch {
	case err == nil, errors.Is(err, wasm.ErrCanceled), errors.Is(err, wasm.ErrClosed):
		return Failure{}, false
	case errors.Is(err, wasm.ErrInvalidModule):
		f.Kind = FailInvalidModule
	case errors.As(err, &exit):
		f.Kind, f.ExitCode = FailExit, exit.Code
	case errors.Is(err, wasm.ErrMemoryLimit):
		f.Kind = FailMemoryLimit
	case errors.Is(err, wasm.ErrOutputTooLarge):
		f.Kind = FailOutputTooLarge
	case errors.Is(err, wasm.ErrTimeout):
		f.Kind = FailTimeout
	case errors.Is(err, wasm.ErrTrap):
		f.Kind = FailTrap
	default:
		return Failure{}, false
	}
	return f, true
}

// truncUTF8 cuts s to at most n bytes of valid UTF-8.
func truncUTF8(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// NewFailureReport is the report of MicroJob micro of job id failing as f.
func NewFailureReport(id, micro jobs.ID, f Failure) FailureReport {
	r := FailureReport{Version: FailureVersion, Job: id.String(), Micro: micro.String(), Kind: f.Kind,
		Stderr: truncUTF8(f.Stderr, MaxFailureStderr)}
	if f.Kind == FailExit {
		r.ExitCode = f.ExitCode
	}
	return r
}

// Failure returns the failure the report tells.
func (r FailureReport) Failure() Failure {
	return Failure{Kind: r.Kind, ExitCode: r.ExitCode, Stderr: r.Stderr}
}

// Same reports whether f and g are the same failure: the same kind, and
// for an exit the same code. Stderr may differ.
func (f Failure) Same(g Failure) bool { return f.Kind == g.Kind && f.ExitCode == g.ExitCode }

// DecodeFailure decodes and checks a FailureReport read from key, written
// by author (size limit MaxRecord, no unknown fields): it must name the
// key's job, and the key must end with author.
func DecodeFailure(key, author string, b []byte) (FailureReport, error) {
	var r FailureReport
	if err := decodeStrict(b, &r); err != nil {
		return r, err
	}
	id, err := jobs.ParseHash(r.Job)
	if err != nil {
		return r, fmt.Errorf("%w: failure report job: %w", ErrBadRecord, err)
	}
	if _, err := jobs.ParseHash(r.Micro); err != nil {
		return r, fmt.Errorf("%w: failure report micro: %w", ErrBadRecord, err)
	}
	switch {
	case r.Version != FailureVersion:
		return r, fmt.Errorf("%w: failure report version %d", ErrBadRecord, r.Version)
	case !failKinds[r.Kind]:
		return r, fmt.Errorf("%w: failure report kind %q", ErrBadRecord, r.Kind)
	case r.Kind != FailExit && r.ExitCode != 0:
		return r, fmt.Errorf("%w: failure report of kind %q with exit code %d", ErrBadRecord, r.Kind, r.ExitCode)
	case len(r.Stderr) > MaxFailureStderr:
		return r, fmt.Errorf("%w: failure report stderr of %d bytes, limit %d", ErrBadRecord, len(r.Stderr), MaxFailureStderr)
	case FailureKey(id, author) != key:
		return r, fmt.Errorf("%w: failure report of job %s by %s under %q", ErrBadRecord, r.Job, author, key)
	}
	return r, nil
}

// FailurePrefix is where a job's failure reports live, one per processor.
func FailurePrefix(id jobs.ID) string { return JobKey(id) + "/failure/" }

// FailureKey is where processor keeps its failure report of job id.
func FailureKey(id jobs.ID, processor string) string { return FailurePrefix(id) + processor }

// Reported is one processor's failure report, with its author.
type Reported struct {
	Peer   string
	Report FailureReport
}

// ReadFailures reads job id's failure reports (FailuresIn).
func ReadFailures(ctx context.Context, store crdt.Reader, id jobs.ID) ([]Reported, error) {
	recs, err := store.Query(ctx, FailurePrefix(id))
	if err != nil {
		return nil, err
	}
	return FailuresIn(id, recs), nil
}

// FailuresIn returns the failure reports of job id among recs, by
// author; records that do not decode, or whose key does not name their
// author, are left out.
func FailuresIn(id jobs.ID, recs []crdt.Record) []Reported {
	prefix := FailurePrefix(id)
	var out []Reported
	for _, rec := range recs {
		if rec.Tombstone || rec.Type != FailureType || !strings.HasPrefix(rec.Key, prefix) {
			continue
		}
		r, err := DecodeFailure(rec.Key, rec.AuthorText(), rec.Payload)
		if err != nil {
			continue
		}
		out = append(out, Reported{Peer: rec.AuthorText(), Report: r})
	}
	return out
}
