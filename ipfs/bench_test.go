package ipfs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/ipfs/boxo/bitswap"
	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	yamux "github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	tls "github.com/libp2p/go-libp2p/p2p/security/tls"
	tcp "github.com/libp2p/go-libp2p/p2p/transport/tcp"

	"github.com/jobmesh/jobmesh/p2p"
)

const transferSize = 64 << 20

// sinkProtocol is a stream that the benchmark's receiver drains, to time
// libp2p's own stream throughput (security + muxer) without bitswap.
const sinkProtocol = "/jobmesh/bench/sink/1"

// transferCase is one configuration of the two nodes.
type transferCase struct {
	name   string
	listen string // multiaddr of the only transport the hosts listen on
	chunk  int64
	opts   []bitswap.Option
	// tls builds the host with TLS 1.3 as its only security transport
	// instead of jobmesh's host (Noise preferred, TLS offered).
	tls bool
}

const (
	tcpListen  = "/ip4/127.0.0.1/tcp/0"
	quicListen = "/ip4/127.0.0.1/udp/0/quic-v1"
)

// BenchmarkBitswapTransfer fetches a 64 MiB UnixFS file from one node to
// another over real loopback sockets and compares the rate with io.Copy of
// 64 MiB over a plain loopback TCP socket, measured in the same iteration
// (so both see the same machine load). ratio is bitswap over plain TCP;
// libp2p-MB/s is a raw libp2p stream between the same two hosts, which
// separates the cost of the secure, multiplexed connection from bitswap's.
// Every iteration uses a fresh receiver, so no block is cached.
//
// The first case is jobmesh's configuration; the others vary one setting
// each. Run with -benchtime=3x.
func BenchmarkBitswapTransfer(b *testing.B) {
	tuned := []bitswap.Option{bitswap.WithTargetMessageSize(1 << 20), bitswap.MaxOutstandingBytesPerPeer(16 << 20)}
	for _, tc := range []transferCase{
		{name: "tcp/default", listen: tcpListen, chunk: DefaultConfig().ChunkSize},
		{name: "quic/default", listen: quicListen, chunk: DefaultConfig().ChunkSize},
		{name: "tcp/chunk=1MiB", listen: tcpListen, chunk: 1 << 20},
		{name: "tcp/target-msg=1MiB", listen: tcpListen, chunk: DefaultConfig().ChunkSize,
			opts: []bitswap.Option{bitswap.WithTargetMessageSize(1 << 20)}},
		{name: "tcp/outstanding=16MiB", listen: tcpListen, chunk: DefaultConfig().ChunkSize,
			opts: []bitswap.Option{bitswap.MaxOutstandingBytesPerPeer(16 << 20)}},
		{name: "tcp/all-three", listen: tcpListen, chunk: 1 << 20, opts: tuned},
		{name: "tcp/tls", listen: tcpListen, chunk: DefaultConfig().ChunkSize, tls: true},
		{name: "tcp/tls+all-three", listen: tcpListen, chunk: 1 << 20, opts: tuned, tls: true},
	} {
		b.Run(tc.name, func(b *testing.B) { benchTransfer(b, tc) })
	}
}

func benchTransfer(b *testing.B, tc transferCase) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	data := randomBytes(transferSize, 64)
	src := newBenchNode(b, tc)
	c, err := src.AddFile(ctx, bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(transferSize)

	var tcpTime, streamTime, bitswapTime time.Duration
	for b.Loop() {
		b.StopTimer()
		tcpTime += copyOverTCP(b, data)
		dst := newBenchNode(b, tc)
		if err := dst.h.Connect(ctx, peer.AddrInfo{ID: src.h.ID(), Addrs: src.h.Addrs()}); err != nil {
			b.Fatal(err)
		}
		streamTime += copyOverStream(b, ctx, src, dst, data)
		b.StartTimer()

		start := time.Now()
		if err := dst.Fetch(ctx, c); err != nil {
			b.Fatal(err)
		}
		bitswapTime += time.Since(start)

		b.StopTimer()
		r, err := dst.Cat(ctx, c)
		if err != nil {
			b.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, data) {
			b.Fatalf("fetched %d bytes, not identical to the %d added (%v)", len(got), len(data), err)
		}
		dst.close()
		b.StartTimer()
	}
	rate := func(d time.Duration) float64 { return float64(b.N) * transferSize / 1e6 / d.Seconds() }
	b.ReportMetric(rate(tcpTime), "tcp-MB/s")
	b.ReportMetric(rate(streamTime), "libp2p-MB/s")
	b.ReportMetric(rate(bitswapTime), "bitswap-MB/s")
	b.ReportMetric(tcpTime.Seconds()/bitswapTime.Seconds(), "ratio")
}

var quiet = slog.New(slog.DiscardHandler)

type benchNode struct {
	h *p2p.Host
	*Node
}

func (n benchNode) close() {
	n.Node.Close()
	n.h.Close()
}

// newBenchNode starts a host listening on tc's transport only, with
// bitswap tuned by tc. Blocks live in memory, so the figure is the network
// path, not the disk.
func newBenchNode(b *testing.B, tc transferCase) benchNode {
	b.Helper()
	cfg := p2p.LoopbackConfig()
	cfg.ListenAddrs = []string{tc.listen}
	cfg.TopicDiscovery = false
	key, err := p2p.GenerateIdentity()
	if err != nil {
		b.Fatal(err)
	}
	params := p2p.Params{Config: cfg, Identity: key, Logger: quiet}
	if tc.tls {
		params.Host, err = libp2p.New(
			libp2p.Identity(key),
			libp2p.ListenAddrStrings(tc.listen),
			libp2p.Transport(tcp.NewTCPTransport),
			libp2p.Security(tls.ID, tls.New),
			libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
			libp2p.DisableMetrics(),
		)
		if err != nil {
			b.Fatal(err)
		}
	}
	h, err := p2p.New(context.Background(), params)
	if err != nil {
		b.Fatal(err)
	}
	icfg := DefaultConfig()
	icfg.ChunkSize = tc.chunk
	icfg.ProvideFetched = false // time the transfer, not a DHT announcement
	n, err := New(context.Background(), Params{
		Config: icfg, Host: h, Routing: h.DHT,
		Datastore:      dssync.MutexWrap(ds.NewMapDatastore()),
		Logger:         quiet,
		bitswapOptions: tc.opts,
	})
	if err != nil {
		h.Close()
		b.Fatal(err)
	}
	bn := benchNode{h: h, Node: n}
	h.SetStreamHandler(sinkProtocol, func(s network.Stream) {
		_, _ = io.Copy(io.Discard, s)
		_ = s.Close()
	})
	b.Cleanup(bn.close)
	return bn
}

// copyOverTCP times io.Copy of data over a plain 127.0.0.1 TCP connection,
// until the reader has consumed every byte.
func copyOverTCP(b *testing.B, data []byte) time.Duration {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	read := make(chan int64, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			read <- -1
			return
		}
		defer conn.Close()
		n, _ := io.Copy(io.Discard, conn)
		read <- n
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if _, err := io.Copy(conn, bytes.NewReader(data)); err != nil {
		b.Fatal(err)
	}
	_ = conn.(*net.TCPConn).CloseWrite()
	n := <-read
	d := time.Since(start)
	conn.Close()
	if n != int64(len(data)) {
		b.Fatalf("plain TCP delivered %d of %d bytes", n, len(data))
	}
	return d
}

// copyOverStream times io.Copy of data over a libp2p stream from src to
// dst, until dst has consumed every byte (it closes its side after EOF).
func copyOverStream(b *testing.B, ctx context.Context, src, dst benchNode, data []byte) time.Duration {
	b.Helper()
	s, err := src.h.NewStream(ctx, dst.h.ID(), sinkProtocol)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if _, err := io.Copy(s, bytes.NewReader(data)); err != nil {
		b.Fatal(err)
	}
	if err := s.CloseWrite(); err != nil {
		b.Fatal(err)
	}
	// The sink closes after reading everything; EOF here means it did.
	if _, err := io.Copy(io.Discard, s); err != nil {
		b.Fatal(fmt.Errorf("waiting for the sink: %w", err))
	}
	d := time.Since(start)
	_ = s.Close()
	return d
}
