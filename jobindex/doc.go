// Package jobindex is a node's live index of the replicated records of
// the jobs it follows: each record opened and checked once, fed by one
// watch on records.JobsPrefix. Reading a job's records (Records, a
// finish.Records snapshot) is then a lookup instead of a query that
// decodes and verifies every record again: a processor reads them on
// every step, and a query per step made a job cost O(MicroJobs²) per
// processor. The index also keeps counters (Progress: which MicroJobs are
// committed, by whom, which are disclosed) and versions that say when a
// job's records, its judged records or its requests changed, so that
// callers redo work only then.
//
// Consistency: a job's index is loaded with one Query; changes the watch
// delivers while it loads are replayed on top, in order, so nothing
// written after the watch started is missed. If the watch overflows,
// every job's index is marked stale and reloads on its next read. Writes
// made through Writer are applied at once, so a step sees what the
// previous step wrote.
package jobindex
