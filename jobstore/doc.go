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
// A Router stands in for the mesh store (crdt.Replicated): it writes each
// key to the store its level says (records.KeyLevel), and reads a prefix
// from every store whose records lie under it. A prefix wider than one
// job ("/", "/jobs") reads the mesh store and every open job store; one
// inside a job, the mesh store and that job's store; any other, the mesh
// store alone. Query merges the stores' records in key order. Watch
// follows the stores open at the call and those opened while it lives
// (Manager.Follow, which lists the open stores and subscribes to new ones
// under one lock); a job store dropped under a watch ends that store's
// part, not the watch, which ends with its context or the mesh store.
// Merged lists every store's DAG blocks for the block GC.
//
// With Config.Rooms, a MacroJob's room records (took records,
// commitments, disclosures: records.RoomOf) go one level further down, to
// a room store of the MacroJob's own (rooms.go: OpenRoom, RoomPolicy),
// opened by the nodes that join the room or write such a record, reopened
// on restart and dropped with the job's store. Every job store carries the
// MacroJobs' aggregates (records.Carriage): the room records as their
// authors signed them, each checked as if written, so that the job's
// other nodes read them without holding the rooms. The Router reads a
// record held both in a room and carried once, at its newest seq.
//
// A job store refuses, like the mesh store, any record its author may not
// write (records.AuthorPolicy), and also any record that is not a
// job-level record of its own job (Policy): a record of job X that comes
// on job Y's topic is refused and counted by the store, and once per job,
// key and author in jobmesh_jobstore_refused_total. The Manager's other
// metrics are jobmesh_jobstore_open, jobmesh_jobstore_opened_total and
// jobmesh_jobstore_dropped_total; the job stores' own crdt metrics are
// not registered.
package jobstore
