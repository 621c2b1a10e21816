// Package crdttest builds clusters of real crdt.Store replicas for tests:
// real libp2p hosts on 127.0.0.1 connected to each other, real gossipsub on
// each, and one DAG service per replica over boxo's merkledag and
// blockservice. The DAG services share ONE in-memory blockstore behind an
// offline exchange, so blocks written by one replica are readable by all
// without bitswap; the node-level tests cover the bitswap path. The package
// also holds wait-until functions with deadlines, so tests never sleep to
// synchronise.
package crdttest
