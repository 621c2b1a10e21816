// Package jobstore keeps one replicated store per job, beside the mesh
// store: the records that grow with a job's MicroJobs and members (room
// locks, took records, commitments, disclosures, disputes, checks,
// re-runs, redo marks, verdicts, the settlement proposal and its
// signatures; records.JobLevel) live in a go-ds-crdt instance of the
// job's own, with its own namespace (Namespace) and topic (Topic), so
// that only the nodes taking part in a job receive and store them.
//
// A Manager opens a job's store when this node takes part in the job
// (Open), notes when the job is over (End), and after the retention
// period drops it at once: the store is closed, its topic left, and
// every key under its namespace and every DAG block it merged deleted
// (Sweep). A manifest per job in the datastore makes a node that
// restarts reopen the stores it held (Resume), and drop those whose
// retention passed while it was down.
//
// A job store refuses, like the mesh store, any record its author may not
// write (records.AuthorPolicy), and also any record that is not a
// job-level record of its own job (Policy): a record of job X that comes
// on job Y's topic is refused and counted by the store.
package jobstore
