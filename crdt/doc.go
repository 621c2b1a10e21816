// Package crdt is the replicated key-value store of a jobmesh node: go-ds-crdt
// over a pubsub broadcaster and the IPFS DAG service, holding typed records in
// signed envelopes that are checked on every read.
package crdt
