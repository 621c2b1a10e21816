// Package recordstest holds the fixtures that the tests of records and of
// the packages reading its records share: a verified verdict and its
// record, a replicated job, a job to cancel.
package recordstest

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/test"
	mh "github.com/multiformats/go-multihash"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// OutputCID is the CID of an assembled output named "output".
func OutputCID(t testing.TB) cid.Cid {
	t.Helper()
	h, err := mh.Sum([]byte("output"), mh.SHA2_256, -1)
	if err != nil {
		t.Fatal(err)
	}
	return cid.NewCidV1(cid.DagProtobuf, h)
}

// Wallet is the text of wallet wi: 0x and 40 hex digits.
func Wallet(i int) string { return fmt.Sprintf("0x%040x", 0xa0+i) }

// PayoutFixture is a verified verdict: processors p0..p3 with wallets
// w0..w3 (p3 shares w0), p2 a culprit.
func PayoutFixture(t testing.TB) (*jobs.JobInfo, records.VerdictRecord, microjob.Verdict) {
	t.Helper()
	info := &jobs.JobInfo{PriceWei: big.NewInt(1_000_000_007), SeedCommitment: sha256.Sum256([]byte("seed")), Deadline: 1 << 32}
	v := microjob.Verdict{
		Version: microjob.VerdictVersion, Complete: true, Verified: true,
		VerifierHashes: map[uint64][]string{0: {strings.Repeat("ab", 32)}, 1: {strings.Repeat("cd", 32), strings.Repeat("ef", 32)}},
	}
	add := func(p string, w int, n int) {
		for range n {
			v.Results = append(v.Results, microjob.Result{Processor: p, Wallet: Wallet(w)})
		}
	}
	add("p0", 0, 3)
	add("p1", 1, 2)
	add("p2", 2, 4) // the culprit's results do not count
	add("p3", 0, 1)
	rec := records.VerdictRecord{Verdict: json.RawMessage(v.Encode()), Culprits: []string{"p2"}, Output: OutputCID(t).String()}
	return info, rec, v
}

// SpeedFixture is PayoutFixture with rounds and a verdict that decodes: in
// MacroJob 0, p1 committed and disclosed first, then p0, p3 and the
// culprit p2; MacroJob 1 names only p0, whose results but the first are
// in MacroJob 1.
func SpeedFixture(t testing.TB) (*jobs.JobInfo, records.VerdictRecord, microjob.Verdict) {
	t.Helper()
	info, rec, v := PayoutFixture(t)
	v.JobID = info.ID().String()
	for i := range v.Results {
		r := &v.Results[i]
		r.MicroID = jobs.ID(sha256.Sum256([]byte{byte(i)})).String()
		r.Slot = i
		r.ResultCID = OutputCID(t).String()
		r.Hashes = []string{strings.Repeat("ab", 32)}
		if r.Processor == "p0" && i > 0 {
			r.Macro = 1
		}
	}
	v.Results[0].Verifier = true
	rec.Verdict = json.RawMessage(v.Encode())
	if _, err := microjob.DecodeVerdict(rec.Verdict); err != nil {
		t.Fatal(err)
	}
	rec.Rounds = []records.RoundOrder{
		{Macro: 0, Commits: []string{"p1", "p0", "p3", "p2"}, Disclosures: []string{"p1", "p0", "p2", "p3"}},
		{Macro: 1, Commits: []string{"p0"}, Disclosures: []string{"p0"}},
	}
	return info, rec, v
}

// EncodeRecord is rec as a finalizer writes it.
func EncodeRecord(t testing.TB, rec records.VerdictRecord) []byte {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// GroupJob is a valid replicated JobInfo.
func GroupJob(t testing.TB, r uint32, gpu string, minVRAM uint64) *jobs.JobInfo {
	t.Helper()
	info := &jobs.JobInfo{
		Code:           jobs.Source{URI: "file:///job/code.wasm", SHA256: sha256.Sum256([]byte("code"))},
		Data:           jobs.Data{Source: jobs.Source{URI: "file:///job/data.bin", SHA256: sha256.Sum256([]byte("data"))}, Size: 4},
		Slicing:        jobs.Slicing{BlockSize: 1, MicroJobs: 2, BlocksPerMicro: 1},
		SeedCommitment: sha256.Sum256(fmt.Appendf(nil, "group seed %d %s %d", r, gpu, minVRAM)),
		PriceWei:       big.NewInt(1_000_000),
		Creator:        jobs.Address{1},
		Deadline:       2_000_000_000,
		Output:         jobs.Output{Kind: jobs.OutputConcat},
		Requirements: jobs.Requirements{
			Replicas: r, GPUModel: gpu, MinVRAMMiB: minVRAM,
		},
	}
	info.ApplyDefaults()
	if _, err := jobs.Slice(info); err != nil {
		t.Fatal(err)
	}
	return info
}

// CancelJob is a job created by creator.
func CancelJob(t testing.TB, creator jobs.Address) *jobs.JobInfo {
	t.Helper()
	info := &jobs.JobInfo{
		Code:           jobs.Source{URI: "ipfs://bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy", SHA256: sha256.Sum256([]byte("code"))},
		Data:           jobs.Data{Source: jobs.Source{URI: "https://example.com/data", SHA256: sha256.Sum256([]byte("data"))}, Size: 4},
		Slicing:        jobs.Slicing{BlockSize: 64},
		SeedCommitment: jobs.Seed{1},
		PriceWei:       big.NewInt(5),
		Creator:        creator,
		Deadline:       time.Now().Add(time.Hour).Unix(),
	}
	info.ApplyDefaults()
	return info
}

// WithPeerIDs replaces the processor names p0..p4 in rec's rounds and
// culprits with real peer IDs, as a decoder of peer IDs needs them, and
// returns rec and the IDs by name.
func WithPeerIDs(t testing.TB, rec records.VerdictRecord) (records.VerdictRecord, map[string]string) {
	t.Helper()
	ids := map[string]string{}
	for _, p := range []string{"p0", "p1", "p2", "p3", "p4"} {
		ids[p] = test.RandPeerIDFatal(t).String()
	}
	rename := func(ps []string) []string {
		if ps == nil {
			return nil
		}
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = ids[p]
		}
		return out
	}
	rounds := make([]records.RoundOrder, len(rec.Rounds))
	for i, r := range rec.Rounds {
		rounds[i] = records.RoundOrder{Macro: r.Macro, Commits: rename(r.Commits), Disclosures: rename(r.Disclosures), Lockers: rename(r.Lockers)}
	}
	rec.Rounds, rec.Culprits = rounds, rename(rec.Culprits)
	return rec, ids
}
