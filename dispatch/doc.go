// Package dispatch holds the pure, deterministic decisions of the mesh: who
// gets which work and in what order.
//
// It grades processors by card model and VRAM, narrows a job's candidates by
// model locality, weighs them by stake and QoS, and picks among them with a
// random generator seeded from public state (Chooser), so that any node that
// holds the same replicated facts can recompute and audit every choice. It
// orders open jobs by task value (price divided by estimated execution time)
// in per-requirement groups, caps the queue at α·N and names the job to abort
// when it overflows. It scores processors for QoS (VRAM, timeout setting,
// submission speed), reports the ones to kick out, and splits a fee among a
// task's processors in exact wei.
//
// Determinism: nothing here reads a clock, ranges over a map to make a
// decision, or orders by a float that could round differently on another
// machine. Candidates are visited in a canonical order (VRAM, card model, ID),
// job order is an exact rational comparison with the job ID as tie-break, and
// random draws use integer weights derived by one correctly rounded IEEE-754
// division each. The formulas, constants and their sources are written down in
// docs/PROTOCOL.md ("Dispatch derivations").
//
// The package depends on no other jobmesh package: callers translate their
// records (processor advertisements, JobInfo, commitment and disclosure
// records) into Node, Job and TaskOutcome values.
package dispatch
