// Package microjob runs one MicroJob and turns the results of every
// MicroJob of a job into a verdict.
//
// It holds four pure or nearly pure pieces that the mesh wiring calls:
//
//   - Runner executes a MicroJob: it cuts each of the MicroJob's blocks out
//     of the job data, runs the job's WebAssembly code on it (wasm.Runner),
//     hashes each output with SHA-256 and stores the outputs in IPFS as one
//     UnixFS directory with a file per block (see BlockFileName).
//   - Commitment and Disclosure are the two result records a processor
//     writes to the replicated store, in that order (commit–reveal): the
//     commitment binds the block hashes, the result CID and the processor's
//     wallet under a secret salt before anyone discloses, so a processor
//     cannot copy another's hashes. Their keys and the rule that a
//     record under .../<peerID> is authored by that peer are in package
//     records.
//   - Judge compares, for each MacroJob, the verifier MicroJob's block hashes
//     with the regular MicroJobs' hashes of the same blocks and returns a
//     deterministic Verdict: who is credited, which blocks are disputed,
//     which MicroJobs are missing. Resolve settles a dispute with a third
//     processor's hash (majority wins).
//   - Assemble fetches the accepted block outputs, orders them by block
//     index, assembles them by the job's output kind and stores the job
//     result in IPFS.
//
// Nothing here talks to the network by itself: the wiring (queue, topics,
// settlement) moves records and calls these functions.
package microjob
