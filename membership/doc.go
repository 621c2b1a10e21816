// Package membership says whose records count for money once a mesh has
// a chain: it joins a processor to the escrow of the funded jobs it works
// on (Joiner), caches who is a member of a job's escrow
// (escrow.Client.Join), verifies the mesh's wallet bindings (Wallets),
// and holds the rule by which a job's disclosures count in judging it: a
// disclosure counts when its wallet is its author's bound wallet and a
// member of the job's escrow. Processors (Wallets.Filter, View.Filter)
// and creators' nodes (dapp, KeepMembers) judge by the same rule, so both
// find the same verdict from the same records.
//
// Membership is read from the chain: a yes is kept for the job's life, a
// no is asked again after a backoff that doubles up to 32 times. A
// member cannot leave, so a kept yes never goes stale.
package membership
