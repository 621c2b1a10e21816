// Package dapp is the submitting side of jobmesh, run by every client and
// processor node. It publishes a job — code and data added to the node's
// own block layer, or named by URI and pinned by their SHA-256 — keeps
// announcing it on the Jobs channel until it has a verdict, and waits for
// that verdict. With a chain it locks the job's price in the escrow
// contract before publishing the job (so processors can see it is funded)
// and waits for the on-chain release.
//
// The jobs a node submitted are remembered in its own, non-replicated
// datastore, so a restarted node still owns them and announces the open
// ones. A job can be cancelled by the node that submitted it until work on
// it starts: the escrow is aborted (with a chain) and the creator's signed
// cancel record, which processors honour, is written to the store.
package dapp
