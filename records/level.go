package records

import (
	"strings"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/probe"
)

// Level is the replicated state a record belongs to: the mesh's, which
// every node holds to choose work and trust results, or one job's, which
// only the nodes that take part in that job need.
type Level int

const (
	// MeshLevel records are few and small per job (at most a few per
	// job and per node): adverts, wallet bindings, the job announcement,
	// cancel, abort, group, failure report, settled, summary and ask
	// records.
	MeshLevel Level = iota
	// JobLevel records grow with a job's MicroJobs or members: room locks,
	// took records, commitments, disclosures, the aggregates carrying
	// them, reveals, disputes, re-runs,
	// checks, redo marks, verdicts, holders, the settlement proposal and
	// its signatures.
	JobLevel
)

func (l Level) String() string {
	if l == JobLevel {
		return "job"
	}
	return "mesh"
}

// levels maps every record type of the layout to its level.
var levels = map[string]Level{
	AdvertType: MeshLevel, WalletBindingType: MeshLevel, JobType: MeshLevel,
	CancelType: MeshLevel, AbortedType: MeshLevel, GroupType: MeshLevel, SettledType: MeshLevel,
	FailureType: MeshLevel, SummaryType: MeshLevel, AskType: MeshLevel,

	RoomLockType: JobLevel, TookType: JobLevel, CommittedType: JobLevel, DisclosedType: JobLevel, CommitType: JobLevel, ResultType: JobLevel,
	RevealType: JobLevel, DisputeType: JobLevel, RerunType: JobLevel, CheckType: JobLevel,
	RedoType: JobLevel, VerdictType: JobLevel, HolderType: JobLevel, SettlementType: JobLevel,
	SignatureType: JobLevel,
}

// LevelOf returns the level of record type typ; ok is false for a type
// that is not in the layout.
func LevelOf(typ string) (l Level, ok bool) {
	l, ok = levels[typ]
	return l, ok
}

// KeyLevel returns the level of key and, for a job-level key, its job.
// Probe records (under probe.Prefix) are mesh level. A key outside the
// layout is refused with ErrKey.
func KeyLevel(key string) (Level, jobs.ID, error) {
	if strings.HasPrefix(key, probe.Prefix+"/") {
		// Probe records are the mesh's: every processor's QoS reads
		// them (their own author rule checks the key).
		return MeshLevel, jobs.ID{}, nil
	}
	k, err := Parse(key)
	if err != nil {
		return MeshLevel, jobs.ID{}, err
	}
	l, ok := levels[k.Type]
	if !ok {
		return MeshLevel, jobs.ID{}, ErrKey
	}
	if l == JobLevel {
		return l, k.Job, nil
	}
	return l, jobs.ID{}, nil
}

// roomTypes are the job-level records of one MacroJob's room: what its
// members write while they work on it.
var roomTypes = map[string]bool{TookType: true, CommitType: true, ResultType: true}

// RoomOf returns the job and MacroJob of a room record (a took record, a
// commitment or a disclosure), which a node with room stores keeps in its
// MacroJob's store; ok is false for any other key.
func RoomOf(key string) (job jobs.ID, macro uint64, ok bool) {
	k, err := Parse(key)
	if err != nil || !roomTypes[k.Type] {
		return jobs.ID{}, 0, false
	}
	return k.Job, k.Macro, true
}
