package crdt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/ipfs/boxo/ipld/merkledag"
	dstest "github.com/ipfs/boxo/ipld/merkledag/test"
	"github.com/ipfs/go-cid"
	crdtpb "github.com/ipfs/go-ds-crdt/pb"
	ipld "github.com/ipfs/go-ipld-format"
	"google.golang.org/protobuf/proto"
)

func testAnnounce(t testing.TB, blocks ...inlineBlock) []byte {
	t.Helper()
	var msg crdtpb.CRDTBroadcast
	for _, b := range blocks {
		msg.Heads = append(msg.Heads, &crdtpb.Head{Cid: b.cid.Bytes()})
	}
	out, err := proto.Marshal(&msg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func testBlock(data string) inlineBlock {
	nd := merkledag.NodeWithData([]byte(data))
	return inlineBlock{cid: nd.Cid(), data: nd.RawData()}
}

func TestBroadcastCodec(t *testing.T) {
	a, b := testBlock("delta a"), testBlock("delta b")
	announce := testAnnounce(t, a, b)
	wire := encodeBroadcast(announce, []inlineBlock{a, b})
	got, blocks, err := decodeBroadcast(wire)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, announce) || len(blocks) != 2 || !blocks[0].cid.Equals(a.cid) || !bytes.Equal(blocks[1].data, b.data) {
		t.Fatalf("round trip: %x, %v", got, blocks)
	}
	if err := validateBroadcast(wire, 8); err != nil {
		t.Fatalf("a valid framed broadcast is refused: %v", err)
	}
	// A bare go-ds-crdt announcement still passes, with no blocks.
	if got, blocks, err := decodeBroadcast(announce); err != nil || !bytes.Equal(got, announce) || blocks != nil {
		t.Fatalf("bare announcement: %v %v", blocks, err)
	}

	// A block that does not hash to its CID is refused: a peer cannot
	// plant content under a CID it does not match.
	forged := encodeBroadcast(announce, []inlineBlock{{cid: a.cid, data: b.data}})
	if _, _, err := decodeBroadcast(forged); !errors.Is(err, errBadBroadcast) {
		t.Fatalf("forged block: %v", err)
	}
	if err := validateBroadcast(forged, 8); err == nil {
		t.Fatal("the validator passes a forged block")
	}
	// Truncation, trailing bytes, too many blocks, oversize.
	for name, bad := range map[string][]byte{
		"truncated": wire[:len(wire)-3],
		"trailing":  append(append([]byte{}, wire...), 0),
		"oversize":  append(append([]byte{}, inlineMagic...), make([]byte, maxBroadcastBytes)...),
	} {
		if _, _, err := decodeBroadcast(bad); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	if err := validateBroadcast(wire, 1); err == nil {
		t.Error("more blocks than MaxBroadcastHeads pass")
	}
}

func FuzzDecodeBroadcast(f *testing.F) {
	a := testBlock("delta a")
	f.Add(encodeBroadcast(testAnnounce(f, a), []inlineBlock{a}))
	f.Add(testAnnounce(f, a))
	f.Add([]byte("JMB1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		announce, blocks, err := decodeBroadcast(data)
		if err != nil {
			return
		}
		for _, b := range blocks {
			sum, err := b.cid.Prefix().Sum(b.data)
			if err != nil || !sum.Equals(b.cid) {
				t.Fatalf("decoded a block that does not match its CID %s", b.cid)
			}
		}
		if bytes.HasPrefix(data, inlineMagic) {
			again, _, err := decodeBroadcast(encodeBroadcast(announce, blocks))
			if err != nil || !bytes.Equal(again, announce) {
				t.Fatalf("re-encoding: %v", err)
			}
		}
		_ = validateBroadcast(data, 256)
	})
}

func TestSplitHeadsGivesOneAnnouncementPerHead(t *testing.T) {
	a, b := testBlock("delta a"), testBlock("delta b")
	parts := splitHeads(testAnnounce(t, a, b))
	if len(parts) != 2 {
		t.Fatalf("%d announcements, want 2", len(parts))
	}
	for i, want := range []inlineBlock{a, b} {
		var msg crdtpb.CRDTBroadcast
		if err := proto.Unmarshal(parts[i], &msg); err != nil || len(msg.Heads) != 1 || !bytes.Equal(msg.Heads[0].GetCid(), want.cid.Bytes()) {
			t.Fatalf("announcement %d: %v, %v", i, msg.Heads, err)
		}
	}
	one := testAnnounce(t, a)
	if parts := splitHeads(one); len(parts) != 1 || !bytes.Equal(parts[0], one) {
		t.Fatal("a one-head announcement is changed")
	}
}

// TestRepeatedHeadIsQueuedOnce: a head announced again within headRepeat
// of being queued is not queued again (go-ds-crdt would walk it once more
// in parallel); after headRepeat it is, and other heads are unaffected.
func TestRepeatedHeadIsQueuedOnce(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	b := &broadcaster{queued: map[cid.Cid]time.Time{}, now: func() time.Time { return now }}
	a, c := testAnnounce(t, testBlock("delta a")), testAnnounce(t, testBlock("delta c"))
	if !b.fresh(a) || !b.fresh(c) {
		t.Fatal("a first announcement is not queued")
	}
	now = now.Add(headRepeat - time.Second)
	if b.fresh(a) {
		t.Fatal("a head announced again within headRepeat is queued again")
	}
	now = now.Add(time.Second)
	if !b.fresh(a) {
		t.Fatal("a head announced again after headRepeat is not queued")
	}
	if !b.fresh([]byte("not an announcement")) {
		t.Fatal("an unreadable announcement is held back")
	}
	for i := range maxQueuedHeads + 10 {
		b.fresh(testAnnounce(t, testBlock(fmt.Sprint("burst ", i))))
	}
	if len(b.queued) > maxQueuedHeads {
		t.Fatalf("%d heads remembered, the bound is %d", len(b.queued), maxQueuedHeads)
	}
}

// TestInlineNodeKeepsTheAnnouncedCID: a broadcast block decodes to the
// node under the CID it was announced with, CIDv1 (what go-ds-crdt
// writes) as well as CIDv0; a block that is not dag-pb is refused.
func TestInlineNodeKeepsTheAnnouncedCID(t *testing.T) {
	v1 := merkledag.NodeWithData([]byte("delta v1"))
	if err := v1.SetCidBuilder(merkledag.V1CidPrefix()); err != nil {
		t.Fatal(err)
	}
	for _, blk := range []inlineBlock{{cid: v1.Cid(), data: v1.RawData()}, testBlock("delta v0")} {
		nd, err := inlineNode(blk)
		if err != nil {
			t.Fatalf("%s: %v", blk.cid, err)
		}
		if !nd.Cid().Equals(blk.cid) || !bytes.Equal(nd.RawData(), blk.data) {
			t.Fatalf("%s decoded as %s", blk.cid, nd.Cid())
		}
	}
	raw := cid.NewCidV1(cid.Raw, v1.Cid().Hash())
	if _, err := inlineNode(inlineBlock{cid: raw, data: v1.RawData()}); !errors.Is(err, errBadBroadcast) {
		t.Fatalf("a raw block: %v, want errBadBroadcast", err)
	}
}

// countingDAG counts the nodes added to it.
type countingDAG struct {
	ipld.DAGService
	added []cid.Cid
}

func (d *countingDAG) Add(ctx context.Context, nd ipld.Node) error {
	d.added = append(d.added, nd.Cid())
	return d.DAGService.Add(ctx, nd)
}

// TestRepeatedHeadBlockIsStoredOnce: a head's block is stored when it
// first arrives and not again while its head stays queued (headRepeat),
// however often it is re-announced; after that it is stored again.
func TestRepeatedHeadBlockIsStoredOnce(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	dag := &countingDAG{DAGService: dstest.Mock()}
	b := &broadcaster{queued: map[cid.Cid]time.Time{}, now: func() time.Time { return now }, dag: dag, log: slog.New(slog.DiscardHandler)}
	ctx := context.Background()
	a, c := testBlock("delta a"), testBlock("delta c")
	b.storeBlocks(ctx, []inlineBlock{a})
	if !b.fresh(testAnnounce(t, a)) {
		t.Fatal("a first announcement is not queued")
	}
	if _, err := dag.Get(ctx, a.cid); err != nil {
		t.Fatalf("the first block was not stored: %v", err)
	}
	now = now.Add(headRepeat - time.Second)
	b.storeBlocks(ctx, []inlineBlock{a, c})
	if len(dag.added) != 2 || !dag.added[1].Equals(c.cid) {
		t.Fatalf("stored %v: want a once, then only the new block c", dag.added)
	}
	now = now.Add(time.Second)
	b.storeBlocks(ctx, []inlineBlock{a})
	if len(dag.added) != 3 {
		t.Fatalf("stored %v: a block whose head was queued headRepeat ago is not stored again", dag.added)
	}
}

// TestAnnouncedHeadIsNotAnnouncedAgainWithinRepeat: a head this replica
// announced, or heard announced, within repeat is left out of its next
// announcement; one left with no head is not published; after repeat the
// head is announced again, and a head only this replica holds always is.
func TestAnnouncedHeadIsNotAnnouncedAgainWithinRepeat(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	var sent, suppressed int
	b := &broadcaster{now: func() time.Time { return now }, repeat: time.Second, announced: map[cid.Cid]time.Time{},
		count: func(s, x int) { sent, suppressed = sent+s, suppressed+x }}
	own, other, fresh := testBlock("own head"), testBlock("another replica's head"), testBlock("a new head")
	heads := func(announce []byte) []string {
		var msg crdtpb.CRDTBroadcast
		if err := proto.Unmarshal(announce, &msg); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range msg.Heads {
			c, err := cid.Cast(h.GetCid())
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, c.String())
		}
		return out
	}
	if out, ok := b.suppress(testAnnounce(t, own)); !ok || len(heads(out)) != 1 {
		t.Fatalf("a first announcement: %v %v", ok, heads(out))
	}
	b.heard([][]byte{other.cid.Bytes()})
	now = now.Add(time.Second / 2)
	if _, ok := b.suppress(testAnnounce(t, own, other)); ok {
		t.Fatal("heads announced half a repeat ago are announced again")
	}
	out, ok := b.suppress(testAnnounce(t, own, fresh, other))
	if got := heads(out); !ok || len(got) != 1 || got[0] != fresh.cid.String() {
		t.Fatalf("with a new head: %v %v, want only %s", ok, got, fresh.cid)
	}
	now = now.Add(time.Second / 2)
	out, ok = b.suppress(testAnnounce(t, own, fresh, other))
	if got := heads(out); !ok || len(got) != 2 || got[0] != own.cid.String() || got[1] != other.cid.String() {
		t.Fatalf("a repeat later: %v %v, want %s and %s", ok, got, own.cid, other.cid)
	}
	if sent != 4 || suppressed != 5 {
		t.Fatalf("counted %d sent and %d suppressed, want 4 and 5", sent, suppressed)
	}
}

// TestCoveredHeadIsNotAnnounced: a head that a broadcast delta names as
// its parent is left out of this replica's announcements even after
// repeat (whoever gets the delta walks to it); the delta itself is not.
func TestCoveredHeadIsNotAnnounced(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	b := &broadcaster{queued: map[cid.Cid]time.Time{}, now: func() time.Time { return now }, dag: dstest.Mock(),
		log: slog.New(slog.DiscardHandler), repeat: time.Second, announced: map[cid.Cid]time.Time{}, covered: map[cid.Cid]time.Time{}}
	parent := merkledag.NodeWithData([]byte("parent delta"))
	child := merkledag.NodeWithData([]byte("child delta"))
	if err := child.AddNodeLink("", parent); err != nil {
		t.Fatal(err)
	}
	head := func(nd *merkledag.ProtoNode) inlineBlock { return inlineBlock{cid: nd.Cid(), data: nd.RawData()} }
	b.storeBlocks(context.Background(), []inlineBlock{head(child)})
	now = now.Add(time.Hour)
	if _, ok := b.suppress(testAnnounce(t, head(parent))); ok {
		t.Fatal("a head a broadcast delta builds on is announced")
	}
	if _, ok := b.suppress(testAnnounce(t, head(child))); !ok {
		t.Fatal("the delta that covers it is not announced")
	}
}
