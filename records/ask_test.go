package records_test

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/test"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// TestAsk: an ask record round-trips with its peers sorted and each once;
// it lives at mesh level under its author's key, which nobody else may
// write; another job's record, an empty or oversized list, a peer that is
// not canonical, an unknown field or a payload over the limit is refused.
func TestAsk(t *testing.T) {
	id, other := jobs.ID{7}, jobs.ID{8}
	a, b, c := test.RandPeerIDFatal(t), test.RandPeerIDFatal(t), test.RandPeerIDFatal(t)
	payload, err := records.EncodeAsk(id, []string{c.String(), b.String(), c.String()})
	if err != nil {
		t.Fatal(err)
	}
	got, err := records.DecodeAsk(id, payload)
	if want := slices.Sorted(slices.Values([]string{b.String(), c.String()})); err != nil || !slices.Equal(got.Peers, want) {
		t.Fatalf("decoded %+v, %v; want peers %v", got, err, want)
	}
	key := records.AskKey(id, a.String())
	if k, err := records.Parse(key); err != nil || k.Type != records.AskType || k.Peer != a.String() || k.Job != id || k.String() != key {
		t.Fatalf("parsed %+v, %v", k, err)
	}
	if l, _, err := records.KeyLevel(key); err != nil || l != records.MeshLevel {
		t.Fatalf("level %v, %v", l, err)
	}
	policy := records.AuthorPolicy()
	if err := policy(key, a); err != nil {
		t.Fatalf("the ask's own author refused: %v", err)
	}
	if err := policy(key, b); err == nil {
		t.Fatal("an ask under another peer's key was accepted")
	}
	if _, err := records.DecodeAsk(other, payload); !errors.Is(err, records.ErrBadRecord) {
		t.Fatalf("another job's ask: %v", err)
	}
	if _, err := records.EncodeAsk(id, nil); !errors.Is(err, records.ErrBadRecord) {
		t.Fatalf("an empty ask: %v", err)
	}
	many := make([]string, records.MaxAsked+1)
	for i := range many {
		many[i] = test.RandPeerIDFatal(t).String()
	}
	if _, err := records.EncodeAsk(id, many); !errors.Is(err, records.ErrBadRecord) {
		t.Fatalf("%d peers: %v", len(many), err)
	}
	for name, bad := range map[string][]byte{
		"not canonical": bytes.Replace(payload, []byte(b.String()), []byte(strings.ToLower(b.String())), 1),
		"unknown field": bytes.Replace(payload, []byte(`"version"`), []byte(`"x":1,"version"`), 1),
		"version":       bytes.Replace(payload, []byte(`"version":1`), []byte(`"version":2`), 1),
		"too large":     append(bytes.Clone(payload), bytes.Repeat([]byte(" "), 5000)...),
		"unsorted":      []byte(`{"version":1,"job":"` + id.String() + `","peers":["` + slices.Max([]string{b.String(), c.String()}) + `","` + slices.Min([]string{b.String(), c.String()}) + `"]}`),
	} {
		if _, err := records.DecodeAsk(id, bad); !errors.Is(err, records.ErrBadRecord) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzDecodeAsk(f *testing.F) {
	id := jobs.ID{7}
	p := test.RandPeerIDFatal(f)
	b, err := records.EncodeAsk(id, []string{p.String()})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"version":1,"job":"","peers":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := records.DecodeAsk(id, b)
		if err != nil {
			return
		}
		b2, err := records.EncodeAsk(id, a.Peers)
		if err != nil {
			t.Fatal(err)
		}
		a2, err := records.DecodeAsk(id, b2)
		if err != nil || !reflect.DeepEqual(a, a2) {
			t.Fatalf("re-encoded ask: %v, %+v != %+v", err, a2, a)
		}
	})
}
