// Package escrow holds jobmesh's settlement contract and everything Go needs
// to use it.
//
// The contract (contracts/Escrow.sol, compiled artifacts in artifacts/,
// abigen v2 bindings in bindings/) locks a job's price when the DApp creates
// the job, under a key bound to its creator (JobKey), and releases it once
// the mesh has a verdict. Processors join a job before they work on it;
// only members sign, are paid or are slashed. settle reveals the job's seed
// (checked against the commitment made at creation), carries EIP-712
// signatures of a quorum of the members and at least the creator's minimum
// of signers, lands only after the creator's quiet period since the last
// join, credits every payee and the creator's change as pull payments, and
// burns the stake of every culprit the verdict names. A job the mesh never
// settles is refunded after its deadline; its creator may abort it while no
// processor has joined. Processors stake here; the dispatcher reads their
// stake through Client.StakeOf.
//
// Client wraps the bindings for one deployed contract over any
// bind.ContractBackend: go-ethereum's simulated backend (NewSimChain, the
// embedded default), a dev chain served over JSON-RPC on 127.0.0.1 so that
// several local processes share one chain (StartDevChain), or a real chain
// reached with Dial and a keystore wallet. Transactions are signed once and
// sent with retries, so a chain that drops out for a while costs time, not
// money. Reverts come back as *RevertError with the contract's custom error
// decoded by name and matched with errors.Is against the Err* sentinels.
//
// Settlement is the verdict a member signs; its wire form (SignedSettlement)
// is what processors exchange before one of them calls settle.
package escrow
