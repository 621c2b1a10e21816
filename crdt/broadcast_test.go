package crdt

import (
	"maps"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	crdtpb "github.com/ipfs/go-ds-crdt/pb"
	"github.com/multiformats/go-multihash"
	"google.golang.org/protobuf/proto"
)

func announcement(t testing.TB, n int) []byte {
	t.Helper()
	msg := &crdtpb.CRDTBroadcast{}
	for i := range n {
		mh, err := multihash.Sum([]byte{byte(i), byte(i >> 8)}, multihash.SHA2_256, -1)
		if err != nil {
			t.Fatal(err)
		}
		msg.Heads = append(msg.Heads, &crdtpb.Head{Cid: cid.NewCidV1(cid.DagProtobuf, mh).Bytes()})
	}
	b, err := proto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestValidateBroadcast(t *testing.T) {
	if err := validateBroadcast(announcement(t, 3), 4); err != nil {
		t.Fatalf("valid announcement refused: %v", err)
	}
	for name, data := range map[string][]byte{
		"no heads":      announcement(t, 0),
		"too many":      announcement(t, 5),
		"garbage":       []byte("not a protobuf \xff\xff"),
		"bad cid":       mustMarshal(t, &crdtpb.CRDTBroadcast{Heads: []*crdtpb.Head{{Cid: []byte{1, 2, 3}}}}),
		"legacy format": cid.NewCidV1(cid.Raw, mustSum(t)).Bytes(),
		"oversized":     make([]byte, maxBroadcastBytes+1),
	} {
		if err := validateBroadcast(data, 4); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func mustMarshal(t testing.TB, m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustSum(t testing.TB) multihash.Multihash {
	mh, err := multihash.Sum([]byte("x"), multihash.SHA2_256, -1)
	if err != nil {
		t.Fatal(err)
	}
	return mh
}

func FuzzValidateBroadcast(f *testing.F) {
	f.Add(announcement(f, 1))
	f.Add(announcement(f, 3))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		if validateBroadcast(data, 4) != nil {
			return
		}
		// Whatever passes must decode into 1..4 usable CIDs.
		var msg crdtpb.CRDTBroadcast
		if err := proto.Unmarshal(data, &msg); err != nil || len(msg.Heads) == 0 || len(msg.Heads) > 4 {
			t.Fatalf("accepted %x: %v, %d heads", data, err, len(msg.Heads))
		}
		for _, h := range msg.Heads {
			if _, err := cid.Cast(h.GetCid()); err != nil {
				t.Fatalf("accepted bad CID %x", h.GetCid())
			}
		}
	})
}

// TestGreetingNeeded: a greeting goes out unless this replica published
// every head it names itself at or after the batch's latest join; a head
// published before the join, announced by another replica, or named as a
// parent by one still needs it.
func TestGreetingNeeded(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	join := t0.Add(time.Second)
	ann := announcement(t, 2)
	var msg crdtpb.CRDTBroadcast
	if err := proto.Unmarshal(ann, &msg); err != nil {
		t.Fatal(err)
	}
	h0, _ := cid.Cast(msg.Heads[0].GetCid())
	h1, _ := cid.Cast(msg.Heads[1].GetCid())
	for name, c := range map[string]struct {
		sent, announced, covered map[cid.Cid]time.Time
		want                     bool
	}{
		"nothing published":                {nil, nil, nil, true},
		"both published after the join":    {map[cid.Cid]time.Time{h0: join, h1: join.Add(time.Millisecond)}, nil, nil, false},
		"one published before the join":    {map[cid.Cid]time.Time{h0: join, h1: t0}, nil, nil, true},
		"one announced by another replica": {map[cid.Cid]time.Time{h0: join}, map[cid.Cid]time.Time{h0: join, h1: join.Add(time.Second)}, nil, true},
		"one named as a parent":            {map[cid.Cid]time.Time{h0: join}, nil, map[cid.Cid]time.Time{h1: join.Add(time.Second)}, true},
	} {
		b := &broadcaster{sent: map[cid.Cid]time.Time{}, announced: map[cid.Cid]time.Time{}, covered: map[cid.Cid]time.Time{}}
		maps.Copy(b.sent, c.sent)
		maps.Copy(b.announced, c.announced)
		maps.Copy(b.covered, c.covered)
		if got := b.greetingNeeded(ann, join); got != c.want {
			t.Errorf("%s: greeting needed %v, want %v", name, got, c.want)
		}
	}
	if b := (&broadcaster{}); !b.greetingNeeded([]byte("not a protobuf \xff"), join) {
		t.Error("an unreadable announcement is not greeted with")
	}
	// publish notes what it sends: greeting with it right after is not
	// needed for a join before it.
	b := &broadcaster{repeat: time.Minute, sent: map[cid.Cid]time.Time{}, now: func() time.Time { return join.Add(time.Millisecond) }}
	b.noteSent(ann)
	if b.greetingNeeded(ann, join) || !b.greetingNeeded(ann, join.Add(time.Second)) {
		t.Error("noteSent does not count for joins before it, or counts for joins after it")
	}
}
