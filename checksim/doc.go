// Package checksim measures how often the hidden checks catch a lying
// processor. It runs the real slicing and judging code (jobs.Slice,
// Plan.WithChecks, finish.LapseSeed, microjob.Judge and the self-check
// rules of package finish) over many seeded jobs in memory: no network, no
// store, no WebAssembly.
//
// Each job is sliced with its public plan; its regular MicroJobs go to
// simulated processors by a seeded draw, and an adversary (Adversary)
// decides the outputs of the processors it controls. The honest output
// hash of block b is SHA256("block" ‖ uint64be(b)); a lie is another
// hash. Every result is committed and disclosed as a processor would
// (microjob.Commitment and microjob.Disclosure, with a salt). The check
// seed is then the DApp's secret (a fresh one per job), the lapse seed of
// the commitments (a silent DApp), or, as a baseline for comparison, the
// job's public seed commitment, known before anyone commits. A verifier
// runner is drawn among the processors that ran none of the checked
// MicroJobs; a verifier block whose regular block its own runner computed
// is self-checked: re-run by others round after round until the vote is
// decided (finish.SelfChecked, finish.Escalation.NextCheck,
// finish.CheckOutcome).
//
// A lie is caught when the verdict names its processor: a Dispute with the
// liar on one side, a disclosure not credited (Invalid), or a self-check
// that names it. Run reports the catch rate per lied MicroJob and per job,
// each with its 95% Wilson interval, and the redundancy paid: the extra
// block runs (verifier blocks and self-check re-runs) over the regular
// blocks. The dispute resolution that follows a catch is not simulated.
//
// Collusion bound: with a fraction f of the processors colluding, a lie on
// a checked block escapes when the verifier runner is a colluder. Each
// MacroJob's verifier checks K' of its N regular MicroJobs in one uniform
// block each, and its runner is drawn from the processors that ran none of
// them, so a liar that falsifies one block of a MicroJob of K blocks is
// caught with probability at least (1 − f)·K'/(N·K) per MicroJob: (1 − f)/K
// at the defaults (K' = N = K). The bound needs such a processor: where
// every processor ran a checked MicroJob (few processors for N) the runner
// may be the liar itself, and its blocks are self-checked: re-run until a
// hash leads by the dispute margin, or the pool or the re-run bound is
// spent and the vote is undecided. A self-check names only its processor,
// never a re-runner; colluding re-runners pass a lie, or name an honest
// processor (Row.HonestNamed), only by winning that vote.
//
// Framing computes, exactly rather than by sampling, how often K
// colluders of P win a dispute or a self-check against an honest
// processor under the same rule, and bounds it per job.
package checksim
