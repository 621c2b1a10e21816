package crdt

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/go-cid"
	crdtpb "github.com/ipfs/go-ds-crdt/pb"
	ipld "github.com/ipfs/go-ipld-format"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/proto"
)

// BackfillProtocol is the stream protocol by which a replica asks a peer
// for the blocks of a store's DAG below deltas it lacks (docs/PROTOCOL.md,
// "Backfill").
const BackfillProtocol protocol.ID = "/jobmesh/crdt/backfill/1.0.0"

// Backfill limits: a request names one topic and at most
// maxBackfillWants CIDs; a response carries at most backfillBytes of
// blocks and backfillBlocks blocks, each at most maxBackfillBlock; a
// replica asks at most maxBackfillRounds times in a row, and a node
// serves at most maxBackfillServing requests at once.
const (
	backfillMagic      = "JBF1"
	maxBackfillRequest = 64 << 10
	maxBackfillTopic   = 256
	maxBackfillWants   = 256
	backfillBytes      = 4 << 20
	backfillBlocks     = 8192
	maxBackfillBlock   = 1 << 20
	maxBackfillRounds  = 16
	maxBackfillServing = 4
	backfillTimeout    = 30 * time.Second
	// backfillKnownRun: a response that brings this many blocks in a row
	// that the replica already holds has reached its history; it stops
	// reading.
	backfillKnownRun = 64
)

// errBadBackfill: a malformed request or response.
var errBadBackfill = errors.New("crdt: malformed backfill")

// Backfill serves the DAG blocks of a node's stores to peers that ask
// for them, and asks peers for blocks its stores lack. A replica that
// receives an announcement whose delta names parents it does not hold
// asks the announcement's author for the DAG below them in one stream,
// instead of walking it over bitswap one round trip per delta: a node that
// joins a mesh with a long history gets it in a few round trips.
type Backfill struct {
	h   host.Host
	log *slog.Logger

	mu      sync.Mutex
	sources map[string]*backfillSource // by topic
	serving int

	// blocks and bytes count what came in and went out, by direction
	// (received, served); requests count the requests this node
	// answered, by result (served, busy, refused).
	blocks, bytes, requests *prometheus.CounterVec
}

// backfillSource is one store's DAG, read locally only.
type backfillSource struct {
	dag   ipld.DAGService
	local LocalBlocks
}

// NewBackfill serves BackfillProtocol on h until Close; reg, if set,
// receives its metrics.
func NewBackfill(h host.Host, log *slog.Logger, reg prometheus.Registerer) (*Backfill, error) {
	if log == nil {
		log = slog.Default()
	}
	f := &Backfill{h: h, log: log.With("component", "crdt-backfill"), sources: map[string]*backfillSource{},
		blocks: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "jobmesh", Subsystem: "crdt", Name: "backfill_blocks_total",
			Help: "Store DAG blocks backfilled, by direction (received, served)."}, []string{"direction"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "jobmesh", Subsystem: "crdt", Name: "backfill_bytes_total",
			Help: "Bytes of store DAG blocks backfilled, by direction (received, served)."}, []string{"direction"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "jobmesh", Subsystem: "crdt", Name: "backfill_requests_total",
			Help: "Backfill requests from peers, by result (served; busy: over the requests served at once; refused: malformed or for no store of this node)."}, []string{"result"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{f.blocks, f.bytes, f.requests} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("crdt: backfill metrics: %w", err)
			}
		}
	}
	h.SetStreamHandler(BackfillProtocol, f.serve)
	return f, nil
}

// Close stops serving.
func (f *Backfill) Close() { f.h.RemoveStreamHandler(BackfillProtocol) }

// register serves the DAG of the store on topic; the returned func stops.
func (f *Backfill) register(topic string, dag ipld.DAGService, local LocalBlocks) func() {
	f.mu.Lock()
	defer f.mu.Unlock()
	src := &backfillSource{dag: dag, local: local}
	f.sources[topic] = src
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.sources[topic] == src { // not a store reopened on the topic since
			delete(f.sources, topic)
		}
	}
}

// serve answers one request: the blocks below the wanted CIDs that this
// node holds, breadth first, up to the limits.
func (f *Backfill) serve(s network.Stream) {
	f.mu.Lock()
	busy := f.serving >= maxBackfillServing
	if !busy {
		f.serving++
	}
	f.mu.Unlock()
	if busy {
		f.requests.WithLabelValues("busy").Inc()
		_ = s.Reset()
		return
	}
	defer func() {
		f.mu.Lock()
		f.serving--
		f.mu.Unlock()
	}()
	_ = s.SetDeadline(time.Now().Add(backfillTimeout))
	topic, wants, err := readBackfillRequest(bufio.NewReader(io.LimitReader(s, maxBackfillRequest)))
	f.mu.Lock()
	src, ok := f.sources[topic]
	f.mu.Unlock()
	if err != nil || !ok {
		f.requests.WithLabelValues("refused").Inc()
		_ = s.Reset()
		return
	}
	f.requests.WithLabelValues("served").Inc()
	ctx, cancel := context.WithTimeout(context.Background(), backfillTimeout)
	defer cancel()
	w := bufio.NewWriter(s)
	queue, seen := wants, map[cid.Cid]bool{}
	size, n := 0, 0
	for len(queue) > 0 && n < backfillBlocks {
		c := queue[0]
		queue = queue[1:]
		if seen[c] || c.Type() != cid.DagProtobuf {
			continue
		}
		seen[c] = true
		if has, err := src.local.Has(ctx, c); err != nil || !has {
			continue
		}
		nd, err := src.dag.Get(ctx, c)
		if err != nil {
			continue
		}
		raw := nd.RawData()
		if len(raw) > maxBackfillBlock || size+len(raw) > backfillBytes {
			break
		}
		if err := writeBackfillBlock(w, c, raw); err != nil {
			_ = s.Reset()
			return
		}
		size, n = size+len(raw), n+1
		f.blocks.WithLabelValues("served").Inc()
		f.bytes.WithLabelValues("served").Add(float64(len(raw)))
		for _, l := range nd.Links() {
			queue = append(queue, l.Cid)
		}
	}
	if err := w.Flush(); err != nil {
		_ = s.Reset()
		return
	}
	_ = s.Close()
}

// fetch asks from for the DAG of the store on topic below want and hands
// each block that checks to add, which reports whether the replica held
// it already. It returns the links of the new blocks that are neither
// held nor received (what a next round asks for) and whether the
// response stopped at a limit.
func (f *Backfill) fetch(ctx context.Context, from peer.ID, topic string, want []cid.Cid, held func(cid.Cid) bool, add func(ipld.Node) (known bool)) (next []cid.Cid, full bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, backfillTimeout)
	defer cancel()
	s, err := f.h.NewStream(ctx, from, BackfillProtocol)
	if err != nil {
		return nil, false, fmt.Errorf("crdt: backfill from %s: %w", from, err)
	}
	defer func() { _ = s.Reset() }()
	_ = s.SetDeadline(time.Now().Add(backfillTimeout))
	if err := writeBackfillRequest(s, topic, want); err != nil {
		return nil, false, fmt.Errorf("crdt: backfill from %s: %w", from, err)
	}
	if err := s.CloseWrite(); err != nil {
		return nil, false, fmt.Errorf("crdt: backfill from %s: %w", from, err)
	}
	r := bufio.NewReader(s)
	got, links := map[cid.Cid]bool{}, []cid.Cid{}
	// Only the DAG below want: a block must be wanted or linked from one
	// received before it (the server walks breadth first).
	expected := map[cid.Cid]bool{}
	for _, c := range want {
		expected[c] = true
	}
	size, n, knownRun := 0, 0, 0
	for n < backfillBlocks {
		blk, err := readBackfillBlock(r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false, fmt.Errorf("crdt: backfill from %s: %w", from, err)
		}
		if !expected[blk.cid] {
			return nil, false, fmt.Errorf("%w: %s from %s is not below the blocks asked for", errBadBackfill, blk.cid, from)
		}
		nd, err := inlineNode(blk)
		if err != nil {
			return nil, false, fmt.Errorf("crdt: backfill from %s: %w", from, err)
		}
		for _, l := range nd.Links() {
			if len(expected) < 4*backfillBlocks {
				expected[l.Cid] = true
			}
		}
		if size += len(blk.data); size > backfillBytes {
			return nil, false, fmt.Errorf("%w: over %d bytes", errBadBackfill, backfillBytes)
		}
		n++
		got[blk.cid] = true
		f.blocks.WithLabelValues("received").Inc()
		f.bytes.WithLabelValues("received").Add(float64(len(blk.data)))
		if add(nd) {
			if knownRun++; knownRun >= backfillKnownRun {
				return nil, false, nil
			}
			continue
		}
		knownRun = 0
		for _, l := range nd.Links() {
			links = append(links, l.Cid)
		}
	}
	for _, c := range links {
		if !got[c] && !held(c) && len(next) < maxBackfillWants {
			next = append(next, c)
		}
	}
	return next, n >= backfillBlocks || size > backfillBytes-maxBackfillBlock, nil
}

// writeBackfillRequest writes "JBF1" | uvarint len(topic) | topic |
// uvarint n | n × (uvarint len(cid) | cid).
func writeBackfillRequest(w io.Writer, topic string, want []cid.Cid) error {
	b := []byte(backfillMagic)
	b = binary.AppendUvarint(b, uint64(len(topic)))
	b = append(b, topic...)
	b = binary.AppendUvarint(b, uint64(len(want)))
	for _, c := range want {
		cb := c.Bytes()
		b = binary.AppendUvarint(b, uint64(len(cb)))
		b = append(b, cb...)
	}
	_, err := w.Write(b)
	return err
}

// readBackfillRequest reads a request, refusing one over its limits.
func readBackfillRequest(r *bufio.Reader) (string, []cid.Cid, error) {
	magic := make([]byte, len(backfillMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != backfillMagic {
		return "", nil, fmt.Errorf("%w: no magic", errBadBackfill)
	}
	topic, err := readBytes(r, maxBackfillTopic)
	if err != nil {
		return "", nil, err
	}
	n, err := binary.ReadUvarint(r)
	if err != nil || n == 0 || n > maxBackfillWants {
		return "", nil, fmt.Errorf("%w: %d wants", errBadBackfill, n)
	}
	wants := make([]cid.Cid, 0, n)
	for range n {
		cb, err := readBytes(r, 128)
		if err != nil {
			return "", nil, err
		}
		c, err := cid.Cast(cb)
		if err != nil {
			return "", nil, fmt.Errorf("%w: %w", errBadBackfill, err)
		}
		wants = append(wants, c)
	}
	return string(topic), wants, nil
}

// writeBackfillBlock writes uvarint len(cid) | cid | uvarint len(block) |
// block.
func writeBackfillBlock(w io.Writer, c cid.Cid, data []byte) error {
	cb := c.Bytes()
	b := binary.AppendUvarint(nil, uint64(len(cb)))
	b = append(b, cb...)
	b = binary.AppendUvarint(b, uint64(len(data)))
	if _, err := w.Write(b); err != nil {
		return err
	}
	_, err := w.Write(data)
	return err
}

// readBackfillBlock reads one block of a response, checked against its
// CID; io.EOF at its end.
func readBackfillBlock(r *bufio.Reader) (inlineBlock, error) {
	if _, err := r.Peek(1); errors.Is(err, io.EOF) {
		return inlineBlock{}, io.EOF
	}
	cb, err := readBytes(r, 128)
	if err != nil {
		return inlineBlock{}, err
	}
	c, err := cid.Cast(cb)
	if err != nil {
		return inlineBlock{}, fmt.Errorf("%w: %w", errBadBackfill, err)
	}
	data, err := readBytes(r, maxBackfillBlock)
	if err != nil {
		return inlineBlock{}, err
	}
	if sum, err := c.Prefix().Sum(data); err != nil || !sum.Equals(c) {
		return inlineBlock{}, fmt.Errorf("%w: block does not match %s", errBadBackfill, c)
	}
	return inlineBlock{cid: c, data: data}, nil
}

// readBytes reads uvarint len | bytes with len at most limit.
func readBytes(r *bufio.Reader, limit int) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadBackfill, err)
	}
	if n > uint64(limit) {
		return nil, fmt.Errorf("%w: %d bytes over the limit of %d", errBadBackfill, n, limit)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("%w: %w", errBadBackfill, err)
	}
	return b, nil
}

// backfillBehind is how far above a replica's height an announced delta
// must be before the replica asks for the history below it: a replica
// that is a few deltas behind gets them from the next announcements.
const backfillBehind = 4

// setHeight tells the broadcaster the replica's height, once the store
// is open.
func (b *broadcaster) setHeight(h func() uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.height = h
}

// maybeBackfill starts a backfill from the author of a broadcast whose
// deltas name parents this replica lacks, when one of them is more than
// backfillBehind above the replica's height and no backfill runs.
func (b *broadcaster) maybeBackfill(from peer.ID, stored []ipld.Node) {
	if b.backfill == nil || b.local == nil || len(stored) == 0 || from == "" || b.filling.Load() {
		return
	}
	var want []cid.Cid
	for _, nd := range stored {
		for _, l := range nd.Links() {
			if has, err := b.local.Has(b.ctx, l.Cid); err == nil && !has && len(want) < maxBackfillWants {
				want = append(want, l.Cid)
			}
		}
	}
	if len(want) == 0 {
		return
	}
	b.mu.Lock()
	height := b.height
	b.mu.Unlock()
	if height == nil {
		return
	}
	var top uint64
	for _, nd := range stored {
		if p, ok := deltaPriority(nd); ok {
			top = max(top, p)
		}
	}
	if top <= height()+backfillBehind || !b.filling.CompareAndSwap(false, true) {
		return
	}
	b.filled.Add(1)
	go func() {
		defer b.filled.Done()
		defer b.filling.Store(false)
		b.backfillFrom(from, want)
	}()
}

// backfillFrom asks from for the history below want, in rounds while a
// round stops at a limit, and adds each new block to the DAG service.
func (b *broadcaster) backfillFrom(from peer.ID, want []cid.Cid) {
	start, blocks := time.Now(), 0
	held := func(c cid.Cid) bool {
		has, err := b.local.Has(b.ctx, c)
		return err == nil && has
	}
	add := func(nd ipld.Node) bool {
		if held(nd.Cid()) {
			return true
		}
		if err := b.dag.Add(b.ctx, nd); err != nil {
			return true
		}
		blocks++
		if b.stored != nil {
			b.stored(nd.Cid())
		}
		return false
	}
	for range maxBackfillRounds {
		next, full, err := b.backfill.fetch(b.ctx, from, b.name, want, held, add)
		if err != nil {
			b.log.Debug("backfilling the store's history", "from", from, "err", err)
			break
		}
		if !full || len(next) == 0 {
			break
		}
		want = next
	}
	b.log.Debug("backfilled the store's history", "from", from, "blocks", blocks, "took", time.Since(start))
}

// deltaPriority is the priority (height) of a go-ds-crdt delta node.
func deltaPriority(nd ipld.Node) (uint64, bool) {
	pn, ok := nd.(*merkledag.ProtoNode)
	if !ok {
		return 0, false
	}
	var d crdtpb.Delta
	if proto.Unmarshal(pn.Data(), &d) != nil {
		return 0, false
	}
	return d.Priority, true
}
