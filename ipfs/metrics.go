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
	gcRuns          *prometheus.CounterVec
	gcBlocksFreed   prometheus.Counter
	gcBytesFreed    prometheus.Counter
	overQuota       prometheus.Counter
	stagedDiscarded prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, n *Node) *metrics {
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "jobmesh", Subsystem: "ipfs", Name: name, Help: help})
	}
	g := func(name, help string, f func() float64) prometheus.GaugeFunc {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "jobmesh", Subsystem: "ipfs", Name: name, Help: help}, f)
	}
	m := &metrics{
		added:          c("files_added_total", "UnixFS files imported."),
		provided:       c("provides_total", "CIDs announced on the DHT."),
		blocksReceived: c("bitswap_blocks_received_total", "Blocks received over bitswap."),
		bytesReceived:  c("bitswap_bytes_received_total", "Bytes of blocks received over bitswap."),
		blocksRejected: c("blocks_rejected_total", "Blocks refused because their data does not hash to their CID."),
		gcRuns: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "jobmesh", Subsystem: "ipfs", Name: "gc_runs_total",
			Help: "Garbage collections, by what started them (interval, quota, manual) and result (ok, error)."}, []string{"trigger", "result"}),
		gcBlocksFreed:   c("gc_blocks_freed_total", "Blocks the garbage collector deleted."),
		gcBytesFreed:    c("gc_bytes_freed_total", "Bytes of blocks the garbage collector deleted."),
		overQuota:       c("gc_over_quota_total", "Garbage collections after which pins and recent blocks still held more than the quota."),
		stagedDiscarded: c("staged_discarded_total", "Staged imports (uploads) refused or failed, whose spooled content was deleted."),
	}
	if reg != nil {
		reg.MustRegister(m.added, m.provided, m.blocksReceived, m.bytesReceived, m.blocksRejected,
			m.gcRuns, m.gcBlocksFreed, m.gcBytesFreed, m.overQuota, m.stagedDiscarded,
			g("stored_bytes", "Bytes of blocks in the block store, as last counted.", func() float64 { return float64(n.stored.Load()) }),
			g("pins", "Pin records (an owner's pin of a DAG root), expired ones the GC has not removed included.", func() float64 { return float64(n.pinCount.Load()) }))
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
