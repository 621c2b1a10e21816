// Package p2p holds the libp2p host of a jobmesh node: identity, transports,
// resource and connection management, bootstrap with backoff, the private
// Kademlia DHT, mDNS, and GossipSub with per-topic validators.
package p2p
