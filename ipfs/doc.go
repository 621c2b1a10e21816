// Package ipfs is the block layer of a jobmesh node: a persistent blockstore,
// bitswap on the node's libp2p host, and a DAG service, behind the small
// Store interface so that the implementation stays replaceable.
package ipfs
