package finish

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multihash"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// mapReader is a RecordReader over fixed records.
type mapReader []crdt.Record

func (m mapReader) Get(_ context.Context, key string) (crdt.Record, error) {
	for _, r := range m {
		if r.Key == key {
			return r, nil
		}
	}
	return crdt.Record{}, crdt.ErrNotFound
}

func (m mapReader) Query(_ context.Context, prefix string) ([]crdt.Record, error) {
	var out []crdt.Record
	for _, r := range m {
		if strings.HasPrefix(r.Key, prefix) {
			out = append(out, r)
		}
	}
	return out, nil
}

func testPeer(t *testing.T) peer.ID {
	t.Helper()
	_, pub, err := crypto.GenerateEd25519Key(nil)
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestSettledVerdict: of two finalizers' verdicts with one output and
// different rounds (the second judged a took record the first had not
// seen), the one the release's verifier hash binds is returned, whoever
// wrote it; a hash no record binds, or another output, finds none.
func TestSettledVerdict(t *testing.T) {
	id := jobs.ID(sha256.Sum256([]byte("settled")))
	mh, err := multihash.Sum([]byte("output"), multihash.SHA2_256, -1)
	if err != nil {
		t.Fatal(err)
	}
	out := cid.NewCidV1(cid.Raw, mh)
	a, b, dead := testPeer(t), testPeer(t), testPeer(t)
	v := microjob.Verdict{Version: microjob.VerdictVersion, JobID: id.String(), Complete: true, Verified: true,
		VerifierHashes: map[uint64][]string{0: {common.Hash{3}.Hex()[2:]}}, Counts: map[string]int{}, ResultCIDs: map[string]string{}}
	early := records.VerdictRecord{Verdict: json.RawMessage(v.Encode()), Culprits: []string{}, Output: out.String(),
		Rounds: []records.RoundOrder{{Macro: 0, Commits: []string{a.String()}, Disclosures: []string{a.String()}}}}
	late := early
	late.Rounds = []records.RoundOrder{{Macro: 0, Commits: []string{a.String()}, Disclosures: []string{a.String()}, Lockers: []string{dead.String()}}}
	var store mapReader
	for i, w := range []struct {
		author peer.ID
		rec    records.VerdictRecord
	}{{a, early}, {b, late}} {
		payload, err := json.Marshal(w.rec)
		if err != nil {
			t.Fatal(err)
		}
		store = append(store, crdt.Record{Key: records.VerdictPrefix(id) + w.author.String(), Type: records.VerdictType,
			Author: w.author, Seq: uint64(i + 1), Payload: payload})
	}
	root := records.ResultRoot(out)
	for _, want := range []struct {
		rec    records.VerdictRecord
		author peer.ID
	}{{early, a}, {late, b}} {
		got, err := SettledVerdict(context.Background(), store, nil, id, root, records.OutcomeDigest(v, want.rec))
		if err != nil {
			t.Fatal(err)
		}
		if got.Author != want.author.String() || !slices.EqualFunc(got.Record.Rounds, want.rec.Rounds, func(x, y records.RoundOrder) bool {
			return slices.Equal(x.Lockers, y.Lockers)
		}) {
			t.Fatalf("settled verdict by %s with rounds %+v, want %s's", got.Author, got.Record.Rounds, want.author)
		}
	}
	if _, err := SettledVerdict(context.Background(), store, nil, id, root, common.Hash{1}); !errors.Is(err, ErrNoVerdict) {
		t.Fatalf("a verifier hash no record binds: %v", err)
	}
	if _, err := SettledVerdict(context.Background(), store, nil, id, common.Hash{2}, records.OutcomeDigest(v, late)); !errors.Is(err, ErrNoVerdict) {
		t.Fatalf("another result root: %v", err)
	}
}
