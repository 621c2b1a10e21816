package ipfs

import (
	"bytes"
	"io"
	"slices"

	blocks "github.com/ipfs/go-block-format"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	added, provided prometheus.Counter
	blocksReceived  prometheus.Counter
	bytesReceived   prometheus.Counter
	blocksRejected  prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "jobmesh", Subsystem: "ipfs", Name: name, Help: help})
	}
	m := &metrics{
		added:          c("files_added_total", "UnixFS files imported."),
		provided:       c("provides_total", "CIDs announced on the DHT."),
		blocksReceived: c("bitswap_blocks_received_total", "Blocks received over bitswap."),
		bytesReceived:  c("bitswap_bytes_received_total", "Bytes of blocks received over bitswap."),
		blocksRejected: c("blocks_rejected_total", "Blocks refused because their data does not hash to their CID."),
	}
	if reg != nil {
		reg.MustRegister(m.added, m.provided, m.blocksReceived, m.bytesReceived, m.blocksRejected)
	}
	return m
}

// ReceivedBlocks implements bitswap's BlockReceivedNotifier.
func (m *metrics) ReceivedBlocks(_ peer.ID, bs []blocks.Block) {
	m.blocksReceived.Add(float64(len(bs)))
	for _, b := range bs {
		m.bytesReceived.Add(float64(len(b.RawData())))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
