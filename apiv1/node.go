package apiv1

import "time"

// ID is the answer to GET /v1/id: the serving node.
type ID struct {
	PeerID  string   `json:"peer_id"`
	Addrs   []string `json:"addrs"` // full multiaddrs ending in /p2p/<peer id>
	Role    string   `json:"role"`  // bootstrap, processor or client
	Version string   `json:"version"`
	// Escrow is the escrow contract's 0x-address when the node settles on
	// a chain; empty without one (jobs then end at "verified").
	Escrow string `json:"escrow,omitempty"`
}

// Peer is one element of GET /v1/peers: a connected peer.
type Peer struct {
	PeerID string   `json:"peer_id"`
	Addrs  []string `json:"addrs"`
}

// Node is one element of GET /v1/nodes: a processor's advertisement, as
// the replicated store holds it.
type Node struct {
	PeerID         string    `json:"peer_id"`
	Role           string    `json:"role"`
	CardModel      string    `json:"card_model"`
	VRAMMiB        uint64    `json:"vram_mib"`
	CPUs           int       `json:"cpus"`
	Models         []string  `json:"models"`
	Wallet         string    `json:"wallet"`
	Version        string    `json:"version"`
	Addrs          []string  `json:"addrs"`
	ProcessTimeout int64     `json:"process_timeout_s"`
	Updated        time.Time `json:"updated"`
}

// Error is the body of every error response.
type Error struct {
	Error string `json:"error"`
}
