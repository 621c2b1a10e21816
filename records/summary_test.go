package records_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/test"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/records/recordstest"
)

// summaryFixture is recordstest.SpeedFixture with real peer IDs for p0..p3
// and a locker in MacroJob 1.
func summaryFixture(t testing.TB) (records.VerdictRecord, microjob.Verdict, map[string]string) {
	t.Helper()
	_, rec, v := recordstest.SpeedFixture(t)
	rec, ids := recordstest.WithPeerIDs(t, rec)
	rec.Rounds[1].Lockers = []string{ids["p4"]}
	return rec, v, ids
}

func TestSummaryOfAVerdict(t *testing.T) {
	rec, v, _ := summaryFixture(t)
	tx := common.HexToHash("0x1234")
	s, err := records.NewSummary(records.SummarySettled, rec, v, tx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.RoundOrders(), rec.Rounds) {
		t.Fatalf("rounds back from the summary %+v, want %+v", s.RoundOrders(), rec.Rounds)
	}
	if s.Digest() != records.OutcomeDigest(v, rec) {
		t.Fatal("the summary's digest is not the verdict's outcome digest")
	}
	if s.Tx != tx.Hex() || s.Block != 7 || s.Output != rec.Output || len(s.Members) != 5 {
		t.Fatalf("summary %+v", s)
	}
	b, err := records.EncodeSummaryRecord(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := records.DecodeSummaryRecord(b)
	if err != nil || !reflect.DeepEqual(got, s) {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, s)
	}

	// Without a chain: no transaction.
	if s, err := records.NewSummary(records.SummaryVerified, rec, v, tx, 7); err != nil || s.Tx != "" || s.Block != 0 {
		t.Fatalf("verified summary %+v, %v", s, err)
	}
}

// TestOutcomeDigestBindsRoundsAndCulprits: whoever changes a round's
// order, adds a locker (a timeout in every reader's QoS ledger) or names
// another culprit gets another digest than the one the quorum signed.
func TestOutcomeDigestBindsRoundsAndCulprits(t *testing.T) {
	rec, v, ids := summaryFixture(t)
	want := records.OutcomeDigest(v, rec)
	edits := map[string]func(r *records.VerdictRecord){
		"commit order": func(r *records.VerdictRecord) {
			c := r.Rounds[0].Commits
			c[0], c[1] = c[1], c[0]
		},
		"disclosure order": func(r *records.VerdictRecord) {
			d := r.Rounds[0].Disclosures
			d[0], d[1] = d[1], d[0]
		},
		"a framed locker":    func(r *records.VerdictRecord) { r.Rounds[0].Lockers = []string{ids["p4"]} },
		"a locker left out":  func(r *records.VerdictRecord) { r.Rounds[1].Lockers = nil },
		"a framed culprit":   func(r *records.VerdictRecord) { r.Culprits = append(r.Culprits, ids["p0"]) },
		"a culprit let go":   func(r *records.VerdictRecord) { r.Culprits = nil },
		"another MacroJob":   func(r *records.VerdictRecord) { r.Rounds[1].Macro = 2 },
		"a round left out":   func(r *records.VerdictRecord) { r.Rounds = r.Rounds[:1] },
		"peers across lists": func(r *records.VerdictRecord) { r.Rounds[1].Disclosures = nil },
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			r := rec
			r.Culprits = append([]string(nil), rec.Culprits...)
			r.Rounds = nil
			for _, o := range rec.Rounds {
				o.Commits = append([]string(nil), o.Commits...)
				o.Disclosures = append([]string(nil), o.Disclosures...)
				o.Lockers = append([]string(nil), o.Lockers...)
				r.Rounds = append(r.Rounds, o)
			}
			edit(&r)
			if records.OutcomeDigest(v, r) == want {
				t.Fatal("the edit left the outcome digest unchanged")
			}
		})
	}
	v2 := v
	v2.VerifierHashes = map[uint64][]string{0: {strings.Repeat("00", 32)}, 1: v.VerifierHashes[1]}
	if records.OutcomeDigest(v2, rec) == want {
		t.Fatal("another verifier hash left the outcome digest unchanged")
	}
}

func TestDecodeSummaryRecordRefuses(t *testing.T) {
	rec, v, _ := summaryFixture(t)
	s, err := records.NewSummary(records.SummarySettled, rec, v, common.HexToHash("0x99"), 3)
	if err != nil {
		t.Fatal(err)
	}
	other := test.RandPeerIDFatal(t).String()
	cases := map[string]func(s *records.SummaryRecord){
		"version":              func(s *records.SummaryRecord) { s.Version = 2 },
		"state":                func(s *records.SummaryRecord) { s.State = "paid" },
		"settled without tx":   func(s *records.SummaryRecord) { s.Tx = "" },
		"settled at block 0":   func(s *records.SummaryRecord) { s.Block = 0 },
		"verified with tx":     func(s *records.SummaryRecord) { s.State = records.SummaryVerified },
		"output":               func(s *records.SummaryRecord) { s.Output = "not a cid" },
		"verdict":              func(s *records.SummaryRecord) { s.Verdict = "0x12" },
		"culprits unsorted":    func(s *records.SummaryRecord) { s.Culprits = []string{other, other} },
		"culprit not a peer":   func(s *records.SummaryRecord) { s.Culprits = []string{"p2"} },
		"members missing":      func(s *records.SummaryRecord) { s.Members = nil },
		"member in no round":   func(s *records.SummaryRecord) { s.Members = append(s.Members, "12D3KooWzzzz") },
		"member unused":        func(s *records.SummaryRecord) { s.Rounds[1].Lockers = nil },
		"index out of range":   func(s *records.SummaryRecord) { s.Rounds[0].Commits[0] = 9 },
		"negative index":       func(s *records.SummaryRecord) { s.Rounds[0].Commits[0] = -1 },
		"committer twice":      func(s *records.SummaryRecord) { s.Rounds[0].Commits[1] = s.Rounds[0].Commits[0] },
		"locker a committer":   func(s *records.SummaryRecord) { s.Rounds[1].Lockers = []int{s.Rounds[1].Commits[0]} },
		"discloser not commit": func(s *records.SummaryRecord) { s.Rounds[1].Disclosures = s.Rounds[1].Lockers },
		"no committer":         func(s *records.SummaryRecord) { s.Rounds[1].Commits = nil },
		"rounds out of order":  func(s *records.SummaryRecord) { s.Rounds[1].Macro = 0 },
		"rounds missing":       func(s *records.SummaryRecord) { s.Rounds = nil },
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			b, _ := records.EncodeSummaryRecord(s)
			var c records.SummaryRecord
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatal(err)
			}
			edit(&c)
			b, err := records.EncodeSummaryRecord(c)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := records.DecodeSummaryRecord(b); !errors.Is(err, records.ErrBadRecord) {
				t.Fatalf("decoded: %v", err)
			}
		})
	}
	// An empty list is left out, so that a summary has one encoding.
	b, _ := records.EncodeSummaryRecord(s)
	empty := bytes.Replace(b, []byte(`"m":0,`), []byte(`"m":0,"l":[],`), 1)
	if bytes.Equal(empty, b) {
		t.Fatal("no round of MacroJob 0 in the encoding")
	}
	if _, err := records.DecodeSummaryRecord(empty); !errors.Is(err, records.ErrBadRecord) {
		t.Fatalf("empty locker list: %v", err)
	}
	big := bytes.Repeat([]byte(" "), records.MaxSummaryRecord+1)
	if _, err := records.DecodeSummaryRecord(big); !errors.Is(err, records.ErrBadRecord) {
		t.Fatalf("oversized summary: %v", err)
	}
	if _, err := records.DecodeSummaryRecord([]byte(`{"version":1,"state":"verified","extra":1}`)); !errors.Is(err, records.ErrBadRecord) {
		t.Fatalf("unknown field: %v", err)
	}
}

func TestSummaryKeyAndAuthor(t *testing.T) {
	id := jobs.ID{7}
	a, b := test.RandPeerIDFatal(t), test.RandPeerIDFatal(t)
	key := records.SummaryKey(id, a.String())
	k, err := records.Parse(key)
	if err != nil || k.Type != records.SummaryType || k.Peer != a.String() || k.Job != id {
		t.Fatalf("parsed %+v, %v", k, err)
	}
	if l, _, err := records.KeyLevel(key); err != nil || l != records.MeshLevel {
		t.Fatalf("level %v, %v", l, err)
	}
	policy := records.AuthorPolicy()
	if err := policy(key, a); err != nil {
		t.Fatalf("the summary's own author refused: %v", err)
	}
	if err := policy(key, b); err == nil {
		t.Fatal("a summary under another peer's key was accepted")
	}
}

func FuzzDecodeSummaryRecord(f *testing.F) {
	rec, v, _ := summaryFixture(f)
	s, err := records.NewSummary(records.SummarySettled, rec, v, common.HexToHash("0x99"), 3)
	if err != nil {
		f.Fatal(err)
	}
	b, _ := records.EncodeSummaryRecord(s)
	f.Add(b)
	f.Add([]byte(`{"version":1,"state":"verified","output":"","verdict":"","culprits":[],"members":[],"rounds":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := records.DecodeSummaryRecord(b)
		if err != nil {
			return
		}
		b2, err := records.EncodeSummaryRecord(s)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := records.DecodeSummaryRecord(b2)
		if err != nil || !reflect.DeepEqual(s, s2) {
			t.Fatalf("re-encoded summary: %v, %+v != %+v", err, s2, s)
		}
		for _, r := range s.RoundOrders() {
			if len(r.Commits) == 0 {
				t.Fatal("a decoded round without committers")
			}
		}
	})
}
