package finish

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/test"
	"github.com/multiformats/go-multihash"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

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
	a, b, dead := test.RandPeerIDFatal(t), test.RandPeerIDFatal(t), test.RandPeerIDFatal(t)
	v := microjob.Verdict{Version: microjob.VerdictVersion, JobID: id.String(), Complete: true, Verified: true,
		VerifierHashes: map[uint64][]string{0: {common.Hash{3}.Hex()[2:]}}, Counts: map[string]int{}, ResultCIDs: map[string]string{}}
	early := records.VerdictRecord{Verdict: json.RawMessage(v.Encode()), Culprits: []string{}, Output: out.String(),
		Rounds: []records.RoundOrder{{Macro: 0, Commits: []string{a.String()}, Disclosures: []string{a.String()}}}}
	late := early
	late.Rounds = []records.RoundOrder{{Macro: 0, Commits: []string{a.String()}, Disclosures: []string{a.String()}, Lockers: []string{dead.String()}}}
	var store crdttest.Records
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
