// Package ipfs is the block layer of a jobmesh node: a persistent blockstore,
// bitswap on the node's libp2p host, and a DAG service, behind the small
// Store interface so that the implementation stays replaceable.
//
// The node keeps a DAG only while something needs it: owner-labelled,
// recursive pins (pins.go) say what, and a mark-and-sweep garbage
// collector (gc.go) deletes every block that no live pin, no root of the
// node's other DAG users (the replicated store's heads) and no write of
// the last grace period keeps, periodically and when the store grows over
// its quota. Uploads are staged on disk and imported only once whole
// (stage.go), so a refused upload writes no block.
package ipfs
