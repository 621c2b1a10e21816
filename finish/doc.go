// Package finish holds the rules of finishing a job. From the job's
// records (Records, built by FromRecords; Progress says which MicroJobs
// are committed, by whom, and disclosed) it judges the job (Judge:
// disputes, self-checks, culprits, redos), says who may write the
// records that decide the outcome and which of several counts
// (FinalizerOrder, Accept), decides what a processor does next (Decide:
// write redos, request re-runs or checks, wait, stand by, write the
// verdict) and which verdict record counts for a reader (ChooseVerdict,
// ReadVerdict). Beside them are the rules of the work asked outside the
// queues (requests.go): when silent committers' MicroJobs are redone
// (RedoSilent), who redoes a MicroJob first (RedoRank) and when a pass over the
// requests is due (PassDue). A dispute or a self-checked block is settled
// by a vote that escalates until its margin is decisive (escalate.go),
// among re-runners taken from a rerun order every reader checks
// (rerunners.go).
//
// A verifier MicroJob of a job that is not replicated is run outside its
// MacroJob's room: VerifierRunners ranks who runs it, DueVerifiers says
// when each in rank's turn comes.
//
// Hints keeps what a node heard on a job's Job channel: the MicroJobs a
// processor said it completed count as done while it is alive, ahead of
// their commitments in the store (Hints.Done).
//
// The rules read no clock and do no I/O beyond the reads a RecordReader
// or a records.BodyReader is handed for: the time and what was heard on
// the Job channel are inputs. The processor's loops build the inputs,
// call the rules and carry out the decisions, so every replica holding
// the same records decides the same, and the scripts in testdata walk
// the rules without a network.
package finish

import (
	"context"

	"github.com/jobmesh/jobmesh/crdt"
)

// RecordReader reads records from the replicated store (a *crdt.Store, or
// a crdt.Reader over it).
type RecordReader interface {
	Get(ctx context.Context, key string) (crdt.Record, error)
	Query(ctx context.Context, prefix string) ([]crdt.Record, error)
}
