// Package crdt is the replicated key-value store of a jobmesh node: durable
// facts (processor advertisements, JobInfo, MacroJob room locks, result
// commitments and disclosures, verdicts) that every node must eventually
// agree on.
//
// It is go-ds-crdt (a Merkle-CRDT: an add-wins, last-writer-by-DAG-height
// key-value set) whose DAG blocks travel through the node's IPFS DAG service
// and whose new heads are announced on a gossipsub topic, persisted in the
// node's datastore (go-ds-pebble). Replicas converge without coordination;
// a replica that was offline catches up from the heads that the others
// re-announce every RebroadcastInterval.
//
// Every value is a signed envelope (see envelope.go and the protocol
// document): version, key, record type, author peer ID and public key, an
// author-chosen sequence, payload and an Ed25519 signature by the author's
// libp2p key. The key is part of what is signed, so a record cannot be
// replayed under another key. Records are verified on every read (Get,
// Query, Watch); a record that fails is never returned, is counted in
// jobmesh_crdt_records_rejected_total{reason} and logged once, and the store
// goes on serving the others. An optional AuthorPolicy (see OwnerPolicy)
// restricts who may write which keys, for example "/nodes/<peerID>" only by
// that peer.
//
// Caveats, inherited from go-ds-crdt and stated here so that callers design
// for them:
//   - Concurrent writes to one key resolve by DAG height, then by the larger
//     encoded value; the author's Seq does not take part. Keys that several
//     peers write concurrently should be designed so that either winner is
//     acceptable, or be split per writer (e.g. ".../<peerID>").
//   - The store only grows: Delete writes a signed tombstone record, and
//     go-ds-crdt keeps every DAG block.
//   - go-ds-crdt's own tombstones (not used by this package) are unsigned: a
//     peer that bypasses this package can remove a value. Watchers see such
//     a removal as a ChangeDelete with no record. Head announcements are
//     authenticated by gossipsub message signing, configured in package p2p.
//
// The Store owns only what it creates (its go-ds-crdt instance, its topic
// subscription and validator, its metrics); the datastore, DAG service and
// PubSub belong to the caller and stay open after Close. Package crdttest
// builds clusters of real replicas for tests.
package crdt
