package peertext

import (
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/p2p/p2ptest"
)

// TestCanonical: a peer's canonical text passes, before and after it is
// remembered; the same peer as a CID, other case or garbage never does,
// even once the canonical text is remembered; a full cache starts over.
func TestCanonical(t *testing.T) {
	id := p2ptest.NewPeerID(t)
	s := id.String()
	for range 2 {
		if ok, err := Canonical(s); !ok || err != nil {
			t.Fatalf("canonical text refused: %v, %v", ok, err)
		}
		if Of(id) != s {
			t.Fatalf("Of = %q, want %q", Of(id), s)
		}
	}
	if ok, err := Canonical(peer.ToCid(id).String()); ok || err != nil {
		t.Fatalf("the peer as a CID: %v, %v; want not canonical, no error", ok, err)
	}
	for _, bad := range []string{strings.ToLower(s), "nobody", ""} {
		if ok, err := Canonical(bad); ok || err == nil {
			t.Fatalf("%q: %v, %v; want an error", bad, ok, err)
		}
	}
	for range limit + 1 {
		Of(p2ptest.NewPeerID(t))
	}
	if len(texts.m) > limit {
		t.Fatalf("cache holds %d, limit %d", len(texts.m), limit)
	}
	if Of(id) != s {
		t.Fatal("after the cache started over")
	}
}
