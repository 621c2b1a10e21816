package p2p

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	drouting "github.com/libp2p/go-libp2p/p2p/discovery/routing"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jobmesh/jobmesh/internal/wait"
)

func newTestHost(t *testing.T, mutate func(*Config)) *Host {
	t.Helper()
	cfg := LoopbackConfig()
	cfg.TopicDiscovery = false
	if mutate != nil {
		mutate(&cfg)
	}
	key, err := GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(context.Background(), Params{Config: cfg, Identity: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func connect(t *testing.T, a, b *Host) {
	t.Helper()
	if err := a.Connect(context.Background(), peer.AddrInfo{ID: b.ID(), Addrs: b.Addrs()}); err != nil {
		t.Fatal(err)
	}
}

type greeting struct {
	Author string `json:"author"`
	Text   string `json:"text"`
}

func greetingTopic(name string) TopicConfig[greeting] {
	return TopicConfig[greeting]{
		Name:    TopicPrefix + name,
		Kind:    "test",
		MaxSize: 256,
		Encode:  func(g greeting) ([]byte, error) { return json.Marshal(g) },
		Decode: func(b []byte) (greeting, error) {
			var g greeting
			if err := json.Unmarshal(b, &g); err != nil {
				return g, err
			}
			if g.Text == "" {
				return g, errors.New("empty text")
			}
			return g, nil
		},
		Check: func(from peer.ID, g greeting) error {
			if g.Author != from.String() {
				return fmt.Errorf("author %q is not the signer %s", g.Author, from)
			}
			return nil
		},
	}
}

func TestBackoff(t *testing.T) {
	b := NewBackoff(time.Second, 5*time.Second)
	t0 := time.Unix(1000, 0)
	if !b.Ready(t0) {
		t.Fatal("new backoff not ready")
	}
	var delays []time.Duration
	now := t0
	for range 5 {
		b.Failed(now)
		delays = append(delays, b.Delay())
		if b.Ready(now.Add(b.Delay() - time.Nanosecond)) {
			t.Fatal("ready before its delay")
		}
		now = now.Add(b.Delay())
		if !b.Ready(now) {
			t.Fatal("not ready after its delay")
		}
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	if !slices.Equal(delays, want) {
		t.Fatalf("delays %v, want %v", delays, want)
	}
	b.Reset()
	if !b.Ready(t0) || b.Delay() != 0 {
		t.Fatal("reset did not clear")
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*Config){
		"listen":    func(c *Config) { c.ListenAddrs = []string{"not-an-addr"} },
		"bootstrap": func(c *Config) { c.Bootstrap = []string{"/ip4/127.0.0.1/tcp/1"} },
		"dht":       func(c *Config) { c.DHTMode = "sometimes" },
		"conns":     func(c *Config) { c.ConnHigh = c.ConnLow - 1 },
		"queue":     func(c *Config) { c.OutboundQueueSize = 8 },
	} {
		c := DefaultConfig()
		mutate(&c)
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: got %v, want ErrInvalidConfig", name, err)
		}
	}
}

func TestPrivateDHTProtocol(t *testing.T) {
	a := newTestHost(t, nil)
	protos := a.Mux().Protocols()
	var kad []string
	for _, p := range protos {
		if strings.Contains(string(p), "/kad/") {
			kad = append(kad, string(p))
		}
	}
	if !slices.Equal(kad, []string{"/jobmesh/kad/1.0.0"}) {
		t.Fatalf("kad protocols %v, want only /jobmesh/kad/1.0.0", kad)
	}
}

func TestBootstrapReconnects(t *testing.T) {
	boot := newTestHost(t, nil)
	addrs := make([]string, 0)
	for _, a := range boot.FullAddrs() {
		addrs = append(addrs, a.String())
	}
	h := newTestHost(t, func(c *Config) {
		c.Bootstrap = addrs
		c.BootstrapInterval = 20 * time.Millisecond
		c.BootstrapMaxBackoff = 100 * time.Millisecond
	})
	connected := func() error {
		if !slices.Contains(h.Peers(), boot.ID()) {
			return errors.New("not connected to bootstrap peer")
		}
		return nil
	}
	wait.Until(t, 10*time.Second, connected)
	if err := h.Network().ClosePeer(boot.ID()); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 10*time.Second, connected)
}

func TestTopicValidation(t *testing.T) {
	a, b := newTestHost(t, nil), newTestHost(t, nil)
	attacker := newTestHost(t, nil)
	connect(t, a, b)
	connect(t, attacker, b)
	connect(t, attacker, a)

	ta, err := Join(a, greetingTopic("greetings"))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := Join(b, greetingTopic("greetings"))
	if err != nil {
		t.Fatal(err)
	}
	// The attacker runs no validator and publishes raw bytes.
	raw, err := attacker.PubSub.Join(TopicPrefix + "greetings")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Subscribe(); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 10*time.Second, func() error {
		if len(ta.Peers()) < 2 || len(tb.Peers()) < 2 || len(raw.ListPeers()) < 2 {
			return fmt.Errorf("topic peers a=%d b=%d attacker=%d", len(ta.Peers()), len(tb.Peers()), len(raw.ListPeers()))
		}
		return nil
	})

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	bad := [][]byte{
		[]byte("{not json"), // malformed
		mustJSON(t, greeting{Author: attacker.ID().String(), Text: string(make([]byte, 300))}), // oversized
		mustJSON(t, greeting{Author: a.ID().String(), Text: "forged author"}),                  // author mismatch
	}
	for _, m := range bad {
		if err := raw.Publish(ctx, m, pubsub.WithReadiness(pubsub.MinTopicSize(1))); err != nil {
			t.Fatal(err)
		}
	}
	if err := ta.Publish(ctx, greeting{Author: a.ID().String(), Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	// b sees exactly the good message.
	msg, err := tb.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if msg.From != a.ID() || msg.Value.Text != "hello" || msg.Local {
		t.Fatalf("got %+v", msg)
	}
	wait.Until(t, 10*time.Second, func() error {
		rej := testutil.ToFloat64(b.metrics.rejected.WithLabelValues("test", "malformed")) +
			testutil.ToFloat64(b.metrics.rejected.WithLabelValues("test", "oversized")) +
			testutil.ToFloat64(b.metrics.rejected.WithLabelValues("test", "author"))
		if rej != 3 {
			return fmt.Errorf("b rejected %v messages, want 3", rej)
		}
		return nil
	})
	// A publisher cannot send what its own validator refuses.
	if err := ta.Publish(ctx, greeting{Author: b.ID().String(), Text: "lie"}); err == nil {
		t.Fatal("publishing a forged author succeeded")
	}
	// The topic still works after the attack.
	if err := tb.Publish(ctx, greeting{Author: b.ID().String(), Text: "still here"}); err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := ta.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if msg.Local {
			continue
		}
		if msg.Value.Text != "still here" {
			t.Fatalf("got %+v", msg)
		}
		break
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDropInboundIgnoresAFractionOfOthersMessages(t *testing.T) {
	self, other := peer.ID("self"), peer.ID("other")
	dropped := prometheus.NewCounter(prometheus.CounterOpts{Name: "dropped"})
	v := dropInbound(self, 0.25, dropped)
	ignored := 0
	const n = 20000
	for range n {
		switch v(context.Background(), other, nil) {
		case pubsub.ValidationIgnore:
			ignored++
		case pubsub.ValidationAccept:
		default:
			t.Fatal("a dropped message must be ignored, never rejected (no peer is to blame)")
		}
		if v(context.Background(), self, nil) != pubsub.ValidationAccept {
			t.Fatal("a node's own messages are never dropped")
		}
	}
	// 25% of 20,000: the standard deviation is about 61, so ±1,000 is
	// far outside any chance result.
	if ignored < n/4-1000 || ignored > n/4+1000 {
		t.Fatalf("ignored %d of %d, want about %d", ignored, n, n/4)
	}
	if got := testutil.ToFloat64(dropped); got != float64(ignored) {
		t.Fatalf("counted %v drops, ignored %d", got, ignored)
	}
	cfg := DefaultConfig()
	cfg.DropInbound = 1
	if err := cfg.Validate(); err == nil {
		t.Fatal("DropInbound 1 is accepted")
	}
}

// TestReachFindsAPeerThroughTheDHT: a host reaches a peer it has no
// address for through a DHT peer both are connected to; reaching a
// connected peer or itself does nothing.
func TestReachFindsAPeerThroughTheDHT(t *testing.T) {
	a, b, c := newTestHost(t, nil), newTestHost(t, nil), newTestHost(t, nil)
	connect(t, a, b)
	connect(t, c, b)
	if len(a.Peerstore().Addrs(c.ID())) != 0 {
		t.Fatal("a already knows c's addresses")
	}
	ctx := context.Background()
	// b's routing table learns c once the DHT protocol is confirmed on
	// the connection: retry until it has.
	wait.Until(t, 10*time.Second, func() error {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		return a.Reach(rctx, c.ID())
	})
	if !slices.Contains(a.Peers(), c.ID()) {
		t.Fatal("Reach returned without a connection")
	}
	// a's lookup was answered by b, which counts it.
	if got := testutil.ToFloat64(b.metrics.dhtRequests.WithLabelValues("find_node")); got < 1 {
		t.Fatalf("b counted %v find_node requests, want at least a's lookup", got)
	}
	if err := a.Reach(ctx, a.ID()); err != nil {
		t.Fatalf("reaching itself: %v", err)
	}
	if err := a.Reach(ctx, b.ID()); err != nil {
		t.Fatalf("reaching a connected peer: %v", err)
	}
}

// TestUndiscoveredTopicStaysOffTheDHT: a topic joined Undiscovered
// leaves no provider record on the DHT; a discovered one does.
func TestUndiscoveredTopicStaysOffTheDHT(t *testing.T) {
	discover := func(c *Config) { c.TopicDiscovery = true }
	a, b := newTestHost(t, discover), newTestHost(t, discover)
	connect(t, a, b)
	room, open := greetingTopic("job/j/macro/0"), greetingTopic("jobs")
	room.Undiscovered = true
	ta, err := Join(a, room)
	if err != nil {
		t.Fatal(err)
	}
	defer ta.Close()
	if _, err := Join(a, open); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rendezvous := drouting.NewRoutingDiscovery(b.DHT)
	providers := func(topic string) ([]peer.ID, error) {
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		ch, err := rendezvous.FindPeers(fctx, pubsubNamespace+topic)
		if err != nil {
			return nil, err
		}
		var ids []peer.ID
		for p := range ch {
			ids = append(ids, p.ID)
		}
		return ids, nil
	}
	// The discovered topic, joined after the room, shows up on the DHT.
	wait.Until(t, 20*time.Second, func() error {
		ids, err := providers(open.Name)
		if err != nil || !slices.Contains(ids, a.ID()) {
			return fmt.Errorf("jobs topic providers %v, err %v", ids, err)
		}
		return nil
	})
	if ids, err := providers(room.Name); err != nil || len(ids) != 0 {
		t.Fatalf("undiscovered topic has providers %v (err %v)", ids, err)
	}
}

// TestJoinReachesNamedMembers: a host that joins a topic with Reach dials
// the named member, which it was not connected to, and hears its
// messages.
func TestJoinReachesNamedMembers(t *testing.T) {
	a, c := newTestHost(t, nil), newTestHost(t, nil)
	room := greetingTopic("job/j/macro/0")
	room.Undiscovered = true
	ta, err := Join(a, room)
	if err != nil {
		t.Fatal(err)
	}
	defer ta.Close()
	ctx := context.Background()
	if len(c.Peers()) != 0 {
		t.Fatal("c is connected before joining")
	}
	if ta.HasPeers() {
		t.Fatal("a alone in the topic reports peers")
	}
	c.Peerstore().AddAddrs(a.ID(), a.Addrs(), time.Hour)
	room.Reach = []peer.ID{a.ID()}
	tc, err := Join(c, room)
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	wait.Until(t, 20*time.Second, func() error {
		if !slices.Contains(tc.Peers(), a.ID()) || !slices.Contains(ta.Peers(), c.ID()) || !ta.HasPeers() || !tc.HasPeers() {
			return fmt.Errorf("room peers: a sees %v (has peers %v), c sees %v (%v)", ta.Peers(), ta.HasPeers(), tc.Peers(), tc.HasPeers())
		}
		return nil
	})
	// The mesh forms at gossipsub's next heartbeat; publish until c hears.
	got := make(chan greeting, 1)
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	go func() {
		if m, err := tc.Next(rctx); err == nil {
			got <- m.Value
		}
	}()
	wait.Until(t, 20*time.Second, func() error {
		if err := ta.Publish(ctx, greeting{Author: a.ID().String(), Text: "hello room"}); err != nil {
			return err
		}
		select {
		case g := <-got:
			if g.Text != "hello room" {
				t.Fatalf("c received %q", g.Text)
			}
			return nil
		case <-time.After(200 * time.Millisecond):
			return errors.New("c has not received a's message")
		}
	})
	tc.Close()
	wait.Until(t, 10*time.Second, func() error {
		if ta.HasPeers() {
			return errors.New("a still reports peers after c left")
		}
		return nil
	})
}

func TestGossipParamsAreValid(t *testing.T) {
	if got, want := gossipParams(6), pubsub.DefaultGossipSubParams(); got.Dlo != want.Dlo || got.Dhi != want.Dhi || got.Dscore != want.Dscore || got.Dout != want.Dout {
		t.Errorf("degree 6: Dlo %d Dhi %d Dscore %d Dout %d, the library's defaults are %d %d %d %d",
			got.Dlo, got.Dhi, got.Dscore, got.Dout, want.Dlo, want.Dhi, want.Dscore, want.Dout)
	}
	h, err := libp2p.New(libp2p.NoListenAddrs)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for d := 2; d <= 12; d++ {
		// NewGossipSub refuses parameters that break the library's rules.
		ctx, cancel := context.WithCancel(context.Background())
		if _, err := pubsub.NewGossipSub(ctx, h, pubsub.WithGossipSubParams(gossipParams(d))); err != nil {
			t.Errorf("degree %d: %v", d, err)
		}
		cancel()
	}
	for _, d := range []int{1, 13} {
		c := DefaultConfig()
		c.MeshDegree = d
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("mesh degree %d: Validate = %v, want ErrInvalidConfig", d, err)
		}
	}
}
