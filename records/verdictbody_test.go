package records

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"
	mh "github.com/multiformats/go-multihash"

	"github.com/jobmesh/jobmesh/ipfs"
	"github.com/jobmesh/jobmesh/ipfs/ipfstest"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/p2p"
)

// maxInline is the processors' default inline limit of a verdict record.
const maxInline = 192 << 10

// bodyNode is a real block layer on a real loopback libp2p host.
type bodyNode struct {
	h *p2p.Host
	*ipfs.Node
}

func newBodyNode(t testing.TB) bodyNode {
	t.Helper()
	h, n, _ := ipfstest.New(t)
	return bodyNode{h: h, Node: n}
}

// connectedBodyNodes are two block layers whose hosts are connected, so
// one fetches what the other holds over bitswap.
func connectedBodyNodes(t testing.TB) (bodyNode, bodyNode) {
	t.Helper()
	a, b := newBodyNode(t), newBodyNode(t)
	if err := b.h.Connect(context.Background(), peer.AddrInfo{ID: a.h.ID(), Addrs: a.h.Addrs()}); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// hexHash is a distinct 32-byte lowercase hex hash.
func hexHash(parts ...any) string {
	h := sha256.Sum256(fmt.Append(nil, parts...))
	return hex.EncodeToString(h[:])
}

// bigVerdictRecord is an inline verdict record of a job with macros
// MacroJobs of 11 results each, every result carrying hashes block hashes,
// as a finalizer builds it.
func bigVerdictRecord(t testing.TB, macros, hashes int) VerdictRecord {
	t.Helper()
	job := jobs.ID(sha256.Sum256([]byte("big job")))
	resultCID := cid.NewCidV1(cid.Raw, must(mh.Sum([]byte("result"), mh.SHA2_256, -1))).String()
	v := microjob.Verdict{
		Version: microjob.VerdictVersion, JobID: job.String(), Complete: true, Verified: true,
		VerifierHashes: map[uint64][]string{}, Counts: map[string]int{}, ResultCIDs: map[string]string{},
	}
	procs := []string{"12D3KooWprocA", "12D3KooWprocB", "12D3KooWprocC"}
	var rounds []RoundOrder
	for m := range macros {
		var hs []string
		for b := range hashes {
			hs = append(hs, hexHash("verifier", m, b))
		}
		v.VerifierHashes[uint64(m)] = hs
		for s := range 11 {
			micro := hexHash("micro", m, s)
			var bh []string
			for b := range hashes {
				bh = append(bh, hexHash("block", m, s, b))
			}
			p := procs[(m+s)%len(procs)]
			v.Results = append(v.Results, microjob.Result{Macro: uint64(m), Slot: s, MicroID: micro, Verifier: s == 10,
				Processor: p, Wallet: "0x00000000000000000000000000000000000000a1", ResultCID: resultCID, Hashes: bh})
			v.ResultCIDs[micro] = resultCID
			v.Counts[p]++
		}
		rounds = append(rounds, RoundOrder{Macro: uint64(m), Commits: procs, Disclosures: procs})
	}
	enc := v.Encode()
	if _, err := microjob.DecodeVerdict(enc); err != nil {
		t.Fatalf("test verdict does not decode: %v", err)
	}
	return VerdictRecord{Verdict: json.RawMessage(enc), Culprits: []string{}, Output: resultCID, Rounds: rounds}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func marshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVerdictRecordInlineUnchanged: a record that fits MaxInlineVerdict is
// written exactly as before (no body fields), and both decoders read it.
func TestVerdictRecordInlineUnchanged(t *testing.T) {
	rec := bigVerdictRecord(t, 2, 2)
	before := marshal(t, rec)
	if bytes.Contains(before, []byte(`"body`)) {
		t.Fatalf("inline record names a body: %s", before)
	}
	out, err := BuildVerdictRecord(context.Background(), rec, maxInline, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := marshal(t, out); !bytes.Equal(got, before) {
		t.Fatalf("inline record changed:\n%s\nwant\n%s", got, before)
	}
	r1, v1, err := DecodeVerdictRecord(before)
	if err != nil {
		t.Fatal(err)
	}
	r2, v2, err := LoadVerdictRecord(context.Background(), before, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(v1.Encode(), v2.Encode()) || !bytes.Equal(marshal(t, r1), marshal(t, r2)) || !bytes.Equal(marshal(t, r2), before) {
		t.Fatal("inline decoders disagree")
	}
}

// TestVerdictBodyRoundTrip: a record above the limit (a 407-MicroJob job,
// larger than the store's payload limit) is written as a small record
// naming its body; a connected node fetches the body over bitswap and gets
// back the same verdict and rounds; DecodeVerdictRecord and a reader
// without a block layer refuse it as needing the body.
func TestVerdictBodyRoundTrip(t *testing.T) {
	rec := bigVerdictRecord(t, 37, 8) // 407 MicroJobs
	full := marshal(t, rec)
	if len(full) <= MaxRecord {
		t.Fatalf("test record is %d bytes, want above the %d-byte record limit", len(full), MaxRecord)
	}
	finalizer, payee := connectedBodyNodes(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := BuildVerdictRecord(ctx, rec, maxInline, finalizer.Node)
	if err != nil {
		t.Fatal(err)
	}
	small := marshal(t, out)
	if len(small) > 1024 || out.Body == "" || len(out.Verdict) != 0 || len(out.Rounds) != 0 {
		t.Fatalf("body record is %d bytes: %s", len(small), small)
	}
	if out.Output != rec.Output || len(out.Culprits) != 0 || out.Culprits == nil {
		t.Fatalf("body record lost output or culprits: %s", small)
	}
	doc, sum, err := encodeVerdictBody(VerdictBody{Verdict: rec.Verdict, Rounds: rec.Rounds})
	if err != nil {
		t.Fatal(err)
	}
	if sum != out.BodySHA256 {
		t.Fatalf("digest %s, want %s", out.BodySHA256, sum)
	}
	if _, _, err := DecodeVerdictRecord(small); !errors.Is(err, ErrBodyNotFetched) || !errors.Is(err, ErrBadRecord) {
		t.Fatalf("DecodeVerdictRecord on a body record: %v", err)
	}
	if _, _, err := LoadVerdictRecord(ctx, small, nil); !errors.Is(err, ErrBodyNotFetched) {
		t.Fatalf("LoadVerdictRecord without blocks: %v", err)
	}
	got, v, err := LoadVerdictRecord(ctx, small, payee.Node)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(v.Encode(), rec.Verdict) || !bytes.Equal(got.Verdict, rec.Verdict) {
		t.Fatal("fetched verdict differs")
	}
	if !bytes.Equal(marshal(t, got.Rounds), marshal(t, rec.Rounds)) || got.Output != rec.Output {
		t.Fatal("fetched rounds or output differ")
	}
	if len(v.Results) != 407 {
		t.Fatalf("%d results, want 407", len(v.Results))
	}
	if has, err := payee.Has(ctx, must(cid.Decode(out.Body))); err != nil || !has {
		t.Fatalf("payee does not hold the body after fetching it (%v)", err)
	}
	if len(doc) == 0 {
		t.Fatal("empty body")
	}
}

// putBody adds doc to n and returns a record naming it with digest sum
// ("" = doc's own SHA-256).
func putBody(t *testing.T, n bodyNode, doc []byte, sum string) []byte {
	t.Helper()
	c, err := n.AddFile(context.Background(), bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if sum == "" {
		s := sha256.Sum256(doc)
		sum = hex.EncodeToString(s[:])
	}
	return marshal(t, VerdictRecord{Culprits: []string{}, Output: "out", Body: c.String(), BodySHA256: sum})
}

// TestVerdictBodyErrors: each way a body can fail has its own error and
// none is mistaken for another.
func TestVerdictBodyErrors(t *testing.T) {
	a, b := connectedBodyNodes(t)
	rec := bigVerdictRecord(t, 2, 2)
	good, _, err := encodeVerdictBody(VerdictBody{Verdict: rec.Verdict, Rounds: rec.Rounds})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sentinels := []error{ErrBodyDigest, ErrBodyTooLarge, ErrBodyUnavailable, ErrBadRecord}
	check := func(name string, err, want error) {
		t.Helper()
		for _, s := range sentinels {
			if errors.Is(err, s) != (s == want) {
				t.Fatalf("%s: got %v, want only %v", name, err, want)
			}
		}
	}

	_, _, err = LoadVerdictRecord(ctx, putBody(t, a, good, hexHash("other")), b.Node)
	check("digest mismatch", err, ErrBodyDigest)

	_, _, err = loadVerdictRecord(ctx, putBody(t, a, good, ""), b.Node, len(good)-1)
	check("oversize", err, ErrBodyTooLarge)
	if _, _, err := loadVerdictRecord(ctx, putBody(t, a, good, ""), b.Node, len(good)); err != nil {
		t.Fatalf("body of exactly the limit: %v", err)
	}

	for name, doc := range map[string][]byte{
		"not json":      []byte("not json"),
		"unknown field": bytes.Replace(good, []byte(`{"verdict"`), []byte(`{"x":1,"verdict"`), 1),
		"not canonical": append([]byte(" "), good...),
		"bad verdict":   []byte(`{"verdict":{"version":1}}`),
		"bad rounds":    badRounds(good),
	} {
		_, _, err = LoadVerdictRecord(ctx, putBody(t, a, doc, ""), b.Node)
		check(name, err, ErrBadRecord)
	}

	sum, _ := mh.Sum([]byte("nobody has this body"), mh.SHA2_256, -1)
	missing := marshal(t, VerdictRecord{Culprits: []string{}, Output: "out", Body: cid.NewCidV1(cid.Raw, sum).String(), BodySHA256: hexHash("x")})
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort()
	_, _, err = LoadVerdictRecord(short, missing, b.Node)
	check("missing", err, ErrBodyUnavailable)
}

// badRounds names a MacroJob the verdict does not hold in the body's last
// round.
func badRounds(doc []byte) []byte {
	i := bytes.LastIndex(doc, []byte(`"macro":1`))
	return slices.Concat(doc[:i], []byte(`"macro":7`), doc[i+len(`"macro":1`):])
}

// TestVerdictRecordBodyFields: the record refuses half or mixed body
// references.
func TestVerdictRecordBodyFields(t *testing.T) {
	rec := bigVerdictRecord(t, 1, 1)
	body := VerdictRecord{Culprits: []string{}, Output: "out", Body: rec.Output, BodySHA256: hexHash("x")}
	for name, r := range map[string]VerdictRecord{
		"digest without body": {Verdict: rec.Verdict, Culprits: []string{}, Output: "out", BodySHA256: hexHash("x")},
		"body and verdict":    {Verdict: rec.Verdict, Culprits: []string{}, Output: "out", Body: body.Body, BodySHA256: body.BodySHA256},
		"body and rounds":     {Culprits: []string{}, Output: "out", Body: body.Body, BodySHA256: body.BodySHA256, Rounds: rec.Rounds},
		"upper-case digest":   {Culprits: []string{}, Output: "out", Body: body.Body, BodySHA256: strings.ToUpper(body.BodySHA256)},
		"short digest":        {Culprits: []string{}, Output: "out", Body: body.Body, BodySHA256: "abcd"},
		"bad cid":             {Culprits: []string{}, Output: "out", Body: "nocid", BodySHA256: body.BodySHA256},
	} {
		if _, _, err := LoadVerdictRecord(context.Background(), marshal(t, r), nil); !errors.Is(err, ErrBadRecord) || errors.Is(err, ErrBodyNotFetched) {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// FuzzLoadVerdictBody: whatever the body decoder accepts is within its
// limit, canonical, and a verdict whose rounds check.
func FuzzLoadVerdictBody(f *testing.F) {
	rec := bigVerdictRecord(f, 2, 1)
	good, _, err := encodeVerdictBody(VerdictBody{Verdict: rec.Verdict, Rounds: rec.Rounds})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"verdict":null}`))
	f.Add([]byte(`{"verdict":{},"rounds":[{"macro":0}]}`))
	const limit = 64 << 10
	f.Fuzz(func(t *testing.T, doc []byte) {
		b, v, err := decodeVerdictBody(doc, limit)
		if err != nil {
			if len(doc) > limit && !errors.Is(err, ErrBodyTooLarge) {
				t.Fatalf("oversize body: %v", err)
			}
			return
		}
		if len(doc) > limit {
			t.Fatalf("decoded %d bytes past the limit", len(doc))
		}
		again, _, err := encodeVerdictBody(b)
		if err != nil || !bytes.Equal(again, doc) {
			t.Fatal("accepted a body that does not re-encode to itself")
		}
		if !bytes.Equal(v.Encode(), b.Verdict) || CheckRounds(b.Rounds, v) != nil {
			t.Fatal("accepted a verdict that does not check")
		}
	})
}

// BenchmarkLoadVerdictBody reads the verdict of a 2,002-MicroJob job (182
// MacroJobs × 11, 8 block hashes each) from a body a connected node serves:
// the first read fetches it over bitswap, later ones from the local
// blockstore (b.N reads in all). It reports the record and body sizes.
func BenchmarkLoadVerdictBody(b *testing.B) {
	rec := bigVerdictRecord(b, 182, 8)
	finalizer, payee := connectedBodyNodes(b)
	ctx := context.Background()
	out, err := BuildVerdictRecord(ctx, rec, maxInline, finalizer.Node)
	if err != nil {
		b.Fatal(err)
	}
	small := marshal(b, out)
	doc, _, err := encodeVerdictBody(VerdictBody{Verdict: rec.Verdict, Rounds: rec.Rounds})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, v, err := LoadVerdictRecord(ctx, small, payee.Node); err != nil || len(v.Results) != 2002 {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(marshal(b, rec))), "inline-bytes")
	b.ReportMetric(float64(len(small)), "record-bytes")
	b.ReportMetric(float64(len(doc)), "body-bytes")
}
