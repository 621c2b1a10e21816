package crdt

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/ipfs/boxo/blockservice"
	"github.com/ipfs/boxo/blockstore"
	offline "github.com/ipfs/boxo/exchange/offline"
	"github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/go-cid"
	"github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	ipld "github.com/ipfs/go-ipld-format"
	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// backfillPeer is a host with its own block store and Backfill.
type backfillPeer struct {
	h      host.Host
	blocks blockstore.Blockstore
	dag    ipld.DAGService
	fill   *Backfill
}

func newBackfillPeer(t *testing.T) *backfillPeer {
	t.Helper()
	h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	bs := blockstore.NewBlockstore(dssync.MutexWrap(datastore.NewMapDatastore()))
	fill, err := NewBackfill(h, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fill.Close)
	return &backfillPeer{h: h, blocks: bs, dag: merkledag.NewDAGService(blockservice.New(bs, offline.Exchange(bs))), fill: fill}
}

// chain adds n dag-pb nodes of pad bytes each to p's DAG, each linking
// to the one before, and returns them oldest first.
func (p *backfillPeer) chain(t *testing.T, n, pad int) []ipld.Node {
	t.Helper()
	var out []ipld.Node
	for i := range n {
		nd := merkledag.NodeWithData(append([]byte(fmt.Sprintf("delta %d ", i)), bytes.Repeat([]byte{byte(i)}, pad)...))
		if i > 0 {
			if err := nd.AddNodeLink("", out[i-1]); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.dag.Add(context.Background(), nd); err != nil {
			t.Fatal(err)
		}
		out = append(out, nd)
	}
	return out
}

// fetchAll backfills into p from peer from, round after round as
// broadcaster.backfillFrom does, and returns the rounds it took.
func (p *backfillPeer) fetchAll(t *testing.T, from peer.ID, topic string, want []cid.Cid) int {
	t.Helper()
	ctx := context.Background()
	held := func(c cid.Cid) bool { ok, err := p.blocks.Has(ctx, c); return err == nil && ok }
	add := func(nd ipld.Node) bool {
		if held(nd.Cid()) {
			return true
		}
		if err := p.dag.Add(ctx, nd); err != nil {
			t.Fatal(err)
		}
		return false
	}
	for round := 1; round <= maxBackfillRounds; round++ {
		next, full, err := p.fill.fetch(ctx, from, topic, want, held, add)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !full || len(next) == 0 {
			return round
		}
		want = next
	}
	t.Fatalf("not done in %d rounds", maxBackfillRounds)
	return 0
}

// TestBackfillBringsTheHistory: a replica that lacks a store's history
// gets all of it from a peer that holds it, in rounds of at most
// backfillBytes, every block checked against its CID; only the store's
// topic is served.
func TestBackfillBringsTheHistory(t *testing.T) {
	server, client := newBackfillPeer(t), newBackfillPeer(t)
	nodes := server.chain(t, 300, 20_000) // about 6 MB: two rounds
	stop := server.fill.register("/store", server.dag, server.blocks)
	defer stop()
	if err := client.h.Connect(context.Background(), peer.AddrInfo{ID: server.h.ID(), Addrs: server.h.Addrs()}); err != nil {
		t.Fatal(err)
	}
	top := nodes[len(nodes)-1].Cid()
	if rounds := client.fetchAll(t, server.h.ID(), "/store", []cid.Cid{top}); rounds != 2 {
		t.Fatalf("took %d rounds, want 2", rounds)
	}
	for i, nd := range nodes {
		if ok, err := client.blocks.Has(context.Background(), nd.Cid()); err != nil || !ok {
			t.Fatalf("block %d of %d is missing (%v)", i, len(nodes), err)
		}
	}
	if got := testutil.ToFloat64(server.fill.blocks.WithLabelValues("served")); got != float64(len(nodes)) {
		t.Fatalf("served %v blocks, want %d", got, len(nodes))
	}

	// Another topic, or a request that is not one, is refused.
	_, _, err := client.fill.fetch(context.Background(), server.h.ID(), "/other", []cid.Cid{top},
		func(cid.Cid) bool { return false }, func(ipld.Node) bool { return false })
	if err == nil {
		t.Fatal("a backfill of a topic the peer does not serve succeeded")
	}
	s, err := client.h.NewStream(context.Background(), server.h.ID(), BackfillProtocol)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = s.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
	_ = s.CloseWrite()
	if _, err := s.Read(make([]byte, 1)); err == nil {
		t.Fatal("a malformed request got an answer")
	}
	if got := testutil.ToFloat64(server.fill.requests.WithLabelValues("refused")); got != 2 {
		t.Fatalf("refused %v requests, want 2", got)
	}
}

// TestBackfillRefusesForgedBlocks: a peer that answers with a block whose
// bytes do not hash to its CID, a block outside the DAG asked for, or
// more than a response may carry, adds nothing.
func TestBackfillRefusesForgedBlocks(t *testing.T) {
	client, liar := newBackfillPeer(t), newBackfillPeer(t)
	real := merkledag.NodeWithData([]byte("a delta"))
	other := merkledag.NodeWithData([]byte("another delta"))
	for name, answer := range map[string]func(w *bufio.Writer) error{
		"forged":        func(w *bufio.Writer) error { return writeBackfillBlock(w, real.Cid(), other.RawData()) },
		"not asked for": func(w *bufio.Writer) error { return writeBackfillBlock(w, other.Cid(), other.RawData()) },
		"too big": func(w *bufio.Writer) error {
			return writeBackfillBlock(w, real.Cid(), make([]byte, maxBackfillBlock+1))
		},
	} {
		t.Run(name, func(t *testing.T) {
			liar.h.SetStreamHandler(BackfillProtocol, func(s network.Stream) {
				defer s.Close()
				w := bufio.NewWriter(s)
				_ = answer(w)
				_ = w.Flush()
			})
			if err := client.h.Connect(context.Background(), peer.AddrInfo{ID: liar.h.ID(), Addrs: liar.h.Addrs()}); err != nil {
				t.Fatal(err)
			}
			added := 0
			_, _, err := client.fill.fetch(context.Background(), liar.h.ID(), "/store", []cid.Cid{real.Cid()},
				func(cid.Cid) bool { return false }, func(ipld.Node) bool { added++; return false })
			if err == nil || added != 0 {
				t.Fatalf("fetch: %v, %d blocks added", err, added)
			}
		})
	}
}

// The request and block decoders refuse anything over their limits and
// never panic.
func FuzzReadBackfillRequest(f *testing.F) {
	var good bytes.Buffer
	_ = writeBackfillRequest(&good, "/jobmesh/2/crdt", []cid.Cid{merkledag.NodeWithData([]byte("x")).Cid()})
	f.Add(good.Bytes())
	f.Add([]byte(backfillMagic))
	f.Add([]byte("JBF1\xff\xff\xff\xff\x0f"))
	f.Fuzz(func(t *testing.T, b []byte) {
		topic, wants, err := readBackfillRequest(bufio.NewReader(bytes.NewReader(b)))
		if err != nil {
			if !errors.Is(err, errBadBackfill) {
				t.Fatalf("error %v is not errBadBackfill", err)
			}
			return
		}
		if len(topic) > maxBackfillTopic || len(wants) == 0 || len(wants) > maxBackfillWants {
			t.Fatalf("accepted topic of %d bytes and %d wants", len(topic), len(wants))
		}
		var again bytes.Buffer
		if err := writeBackfillRequest(&again, topic, wants); err != nil {
			t.Fatal(err)
		}
		if _, _, err := readBackfillRequest(bufio.NewReader(&again)); err != nil {
			t.Fatalf("a request read back fails: %v", err)
		}
	})
}

func FuzzReadBackfillBlock(f *testing.F) {
	nd := merkledag.NodeWithData([]byte("x"))
	var good bytes.Buffer
	_ = writeBackfillBlock(&good, nd.Cid(), nd.RawData())
	f.Add(good.Bytes())
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		blk, err := readBackfillBlock(bufio.NewReader(bytes.NewReader(b)))
		if err != nil {
			return
		}
		if len(blk.data) > maxBackfillBlock {
			t.Fatalf("accepted a block of %d bytes", len(blk.data))
		}
		if nd, err := inlineNode(blk); err == nil && !nd.Cid().Equals(blk.cid) {
			t.Fatal("a block that checks decodes under another CID")
		}
	})
}
