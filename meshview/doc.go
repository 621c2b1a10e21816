// Package meshview holds what a node knows of the mesh's processors and
// open jobs, derived from the replicated store and the chain: Facts reads
// the advertisements, stakes and finished jobs into a View (the live
// processors with their grades, QoS scores and selection weights), and the
// View answers a job's weights, model holders and pre-download names. The
// queue view (ReadQueue, Evictions) lists the open jobs in their dispatch
// groups, and the group rules (ChooseGroup, PickGroup) choose and settle
// the processors of a replicated job.
//
// Everything here reads; nothing writes a record. Facts does I/O through
// the small interfaces at the top of facts.go; the rest are pure functions
// of their inputs, so that every node holding the same records computes
// the same answer. The processor's loops (package processor) keep a View
// fresh and act on these answers.
package meshview
