package records_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/records/recordstest"
)

func TestDecodeVerdictRecordRounds(t *testing.T) {
	_, rec, _ := recordstest.SpeedFixture(t)
	b := recordstest.EncodeRecord(t, rec)
	got, _, err := records.DecodeVerdictRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rounds) != 2 || !slices.Equal(got.Rounds[0].Commits, rec.Rounds[0].Commits) ||
		!slices.Equal(got.Rounds[0].Disclosures, rec.Rounds[0].Disclosures) {
		t.Fatalf("rounds %+v, want %+v", got.Rounds, rec.Rounds)
	}
	// Lockers travel with the rounds, and a round without them encodes
	// without the field, as an older finalizer wrote it.
	if strings.Contains(string(b), "lockers") {
		t.Fatalf("rounds without lockers encode them: %s", b)
	}
	locked := rec
	locked.Rounds = slices.Clone(rec.Rounds)
	locked.Rounds[0].Lockers = []string{"p8", "p9"}
	got, _, err = records.DecodeVerdictRecord(recordstest.EncodeRecord(t, locked))
	if err != nil || !slices.Equal(got.Rounds[0].Lockers, []string{"p8", "p9"}) {
		t.Fatalf("lockers %+v, %v", got.Rounds, err)
	}
	// A record without rounds (version 1) still decodes, and encodes
	// without the field, so version 1 decoders read it.
	old := rec
	old.Rounds = nil
	ob := recordstest.EncodeRecord(t, old)
	if strings.Contains(string(ob), "rounds") {
		t.Fatalf("a record without rounds encodes them: %s", ob)
	}
	if got, _, err := records.DecodeVerdictRecord(ob); err != nil || got.Rounds != nil {
		t.Fatalf("version 1 record: %+v, %v", got.Rounds, err)
	}
	long := strings.Repeat("p", dispatch.MaxIDLen+1)
	many := make([]string, dispatch.MaxTaskProcessors+1)
	for i := range many {
		many[i] = "p" + strings.Repeat("x", i)
	}
	for name, rounds := range map[string][]records.RoundOrder{
		"macro twice":              {{Macro: 0, Commits: []string{"p0"}}, {Macro: 0, Commits: []string{"p1"}}},
		"macros descending":        {{Macro: 1, Commits: []string{"p0"}}, {Macro: 0, Commits: []string{"p0"}}},
		"macro outside the plan":   {{Macro: 2, Commits: []string{"p0"}}},
		"no committer":             {{Macro: 0}},
		"committer twice":          {{Macro: 0, Commits: []string{"p0", "p0"}}},
		"empty peer ID":            {{Macro: 0, Commits: []string{""}}},
		"peer ID too long":         {{Macro: 0, Commits: []string{long}}},
		"too many committers":      {{Macro: 0, Commits: many}},
		"discloser did not commit": {{Macro: 0, Commits: []string{"p0"}, Disclosures: []string{"p1"}}},
		"discloser twice":          {{Macro: 0, Commits: []string{"p0", "p1"}, Disclosures: []string{"p0", "p0"}}},
		"more rounds than macros":  {{Macro: 0, Commits: []string{"p0"}}, {Macro: 1, Commits: []string{"p0"}}, {Macro: 2, Commits: []string{"p0"}}},
		"locker that committed":    {{Macro: 0, Commits: []string{"p0"}, Lockers: []string{"p0"}}},
		"locker twice":             {{Macro: 0, Commits: []string{"p0"}, Lockers: []string{"p1", "p1"}}},
		"empty locker":             {{Macro: 0, Commits: []string{"p0"}, Lockers: []string{""}}},
		"too many assigned":        {{Macro: 0, Commits: []string{"p"}, Lockers: many[1:]}},
	} {
		bad := rec
		bad.Rounds = rounds
		if _, _, err := records.DecodeVerdictRecord(recordstest.EncodeRecord(t, bad)); !errors.Is(err, records.ErrBadRecord) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, bad := range map[string]string{
		"unknown round field": strings.Replace(string(b), `"macro":0,`, `"macro":0,"extra":1,`, 1),
		"rounds not a list":   strings.Replace(string(b), `"rounds":[`, `"rounds":{"x":[`, 1),
		"oversized":           strings.Replace(string(b), `"commits":["p1"`, `"commits":["`+strings.Repeat("p", records.MaxRecord)+`","p1"`, 1),
	} {
		if _, _, err := records.DecodeVerdictRecord([]byte(bad)); !errors.Is(err, records.ErrBadRecord) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzDecodeVerdictRecord(f *testing.F) {
	_, rec, _ := recordstest.SpeedFixture(f)
	f.Add(recordstest.EncodeRecord(f, rec))
	rec.Rounds = nil
	f.Add(recordstest.EncodeRecord(f, rec))
	f.Add([]byte(`{"verdict":{},"culprits":[],"output":"","rounds":[{"macro":0,"commits":["a"],"disclosures":["a","a"]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, v, err := records.DecodeVerdictRecord(b)
		if err != nil {
			if !errors.Is(err, records.ErrBadRecord) {
				t.Fatalf("error not ErrBadRecord: %v", err)
			}
			return
		}
		if len(b) > records.MaxRecord {
			t.Fatalf("decoded %d bytes, limit %d", len(b), records.MaxRecord)
		}
		for i, r := range rec.Rounds {
			if i > 0 && r.Macro <= rec.Rounds[i-1].Macro {
				t.Fatalf("rounds not ascending: %+v", rec.Rounds)
			}
			if _, ok := v.VerifierHashes[r.Macro]; !ok {
				t.Fatalf("round of MacroJob %d outside the verdict", r.Macro)
			}
			if len(r.Commits) == 0 || len(r.Commits) > dispatch.MaxTaskProcessors {
				t.Fatalf("%d committers", len(r.Commits))
			}
			for _, p := range r.Disclosures {
				if !slices.Contains(r.Commits, p) {
					t.Fatalf("discloser %q did not commit", p)
				}
			}
		}
		// What decodes re-encodes to a record that decodes the same.
		again, _, err := records.DecodeVerdictRecord(recordstest.EncodeRecord(t, rec))
		if err != nil {
			t.Fatalf("re-encoded record refused: %v", err)
		}
		if len(again.Rounds) != len(rec.Rounds) {
			t.Fatalf("re-encoding changed the rounds")
		}
	})
}
