package ipfs

import (
	"bytes"
	"io"
	"slices"

	bsmsg "github.com/ipfs/boxo/bitswap/message"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	added, provided prometheus.Counter
	blocksReceived  prometheus.Counter
	bytesReceived   prometheus.Counter
	blocksSent      prometheus.Counter
	bytesSent       prometheus.Counter
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
		blocksSent:     c("bitswap_blocks_sent_total", "Blocks sent over bitswap."),
		bytesSent:      c("bitswap_bytes_sent_total", "Bytes of blocks sent over bitswap."),
		blocksRejected: c("blocks_rejected_total", "Blocks refused because their data does not hash to their CID."),
		gcRuns: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "jobmesh", Subsystem: "ipfs", Name: "gc_runs_total",
			Help: "Garbage collections, by what started them (interval, quota, manual) and result (ok, error)."}, []string{"trigger", "result"}),
		gcBlocksFreed:   c("gc_blocks_freed_total", "Blocks the garbage collector deleted."),
		gcBytesFreed:    c("gc_bytes_freed_total", "Bytes of blocks the garbage collector deleted."),
		overQuota:       c("gc_over_quota_total", "Garbage collections after which pins and recent blocks still held more than the quota."),
		stagedDiscarded: c("staged_discarded_total", "Staged imports (uploads) refused or failed, whose spooled content was deleted."),
	}
	if reg != nil {
		reg.MustRegister(m.added, m.provided, m.blocksReceived, m.bytesReceived, m.blocksSent, m.bytesSent, m.blocksRejected,
			m.gcRuns, m.gcBlocksFreed, m.gcBytesFreed, m.overQuota, m.stagedDiscarded,
			g("stored_bytes", "Bytes of blocks in the block store, as last counted.", func() float64 { return float64(n.stored.Load()) }),
			g("pins", "Pin records (an owner's pin of a DAG root), expired ones the GC has not removed included.", func() float64 { return float64(n.pinCount.Load()) }))
	}
	return m
}

// bitswapTracer counts the blocks of every bitswap message sent and
// received. It is bitswap's tracer (bitswap.WithTracer), not its
// BlockReceivedNotifier: bitswap.New sets that option to its own server,
// after and over the caller's.
type bitswapTracer struct{ m *metrics }

// MessageReceived implements bitswap's tracer.Tracer.
func (t bitswapTracer) MessageReceived(_ peer.ID, msg bsmsg.BitSwapMessage) {
	for _, b := range msg.Blocks() {
		t.m.blocksReceived.Inc()
		t.m.bytesReceived.Add(float64(len(b.RawData())))
	}
}

// MessageSent implements bitswap's tracer.Tracer.
func (t bitswapTracer) MessageSent(_ peer.ID, msg bsmsg.BitSwapMessage) {
	for _, b := range msg.Blocks() {
		t.m.blocksSent.Inc()
		t.m.bytesSent.Add(float64(len(b.RawData())))
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
