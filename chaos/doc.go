// Package chaos runs many short jobs on an in-process mesh with its
// embedded chain while it injects faults drawn from a seed, and checks
// after each job the invariants the mesh promises whatever happens:
//
//   - one verdict: the escrow is released once, and every verified
//     verdict record of the job (once superseded ones are withdrawn)
//     names the output and culprits of the one the release settled;
//   - every block processed: the verdict is verified and complete, every
//     MicroJob of the checked plan credited;
//   - no honest processor named a culprit: culprits are among the job's
//     liars;
//   - value conserved on chain: payouts and refund add up to the price,
//     each payee's credit grows by its payout, and the escrow holds
//     exactly what it owes (funded jobs, credits, stakes, burned stake);
//   - the output fetchable: a processor that does not hold it fetches it
//     by CID, and it equals the job run locally, block by block.
//
// Lies the checks let pass are counted, not flagged (JobReport.
// LiesAccepted): a lie in a block no verifier drew, or one a colluding
// verifier repeats, passes by design with the odds package checksim
// measures. The liars here append a byte to a tile, which the picture's
// PNG decoder ignores, so the output check sees assembly and fetching,
// and the count sees the lies.
//
// The faults (Faults, drawn per job by Draw): an honest processor killed
// at a random moment of the job (between committing and disclosing, among
// others), the bootstrap node killed with it, a link between two
// processors cut (mocknet), a share of every node's inbound pubsub
// messages dropped for the whole run, and liars: processors that give one
// identical wrong output for every block they run, re-runs included, or
// lie where a lie is cheapest (localmesh.RationalLiar). Killed nodes come
// back, cut links are healed and slashed stakes are topped up to the
// escrow's minimum once the job is over, so that every job starts from
// the whole mesh.
//
// Run also measures, per job, the time from the last block processed
// (the last new commitment the client's store shows) to the verdict;
// the mesh's goal is at most twice the processing timeout.
package chaos
