// Package disclosure holds a node's pending disclosures: the results of
// MicroJobs it committed, kept back until their MacroJob's commitment
// round is over. Disclosure is the second round of commit–reveal: a
// result is disclosed only once every MicroJob of its MacroJob is fully
// committed (finish.Progress.MacroFull), so that nobody can copy a hash
// it has not committed to before.
//
// Pending decides which disclosures are due, from what the job's
// progress says and the time it is handed; the processor's loops write
// the entries (Entries) and report back. While a turn is running, a due
// disclosure is held for that turn to write with its commitments, as one
// store delta instead of two: for Hold, and longer while the running
// turn is expected to go on (StartTurn, from the number of its MicroJobs
// and their pace), up to MaxTurnHold: with turns of ten MicroJobs most
// disclosures come due in the middle of a turn. Holding only for a
// running turn, not while the worker waits in a room for one, keeps a
// job's last disclosures from waiting for turns that never come.
package disclosure
