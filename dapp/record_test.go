package dapp

import (
	"crypto/sha256"
	"math/big"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/jobs"
)

func testInfo() *jobs.JobInfo {
	info := &jobs.JobInfo{
		Code:           jobs.Source{URI: "https://example.com/code.wasm", SHA256: sha256.Sum256([]byte("c"))},
		Data:           jobs.Data{Source: jobs.Source{URI: "https://example.com/data", SHA256: sha256.Sum256([]byte("d"))}, Size: 1},
		Slicing:        jobs.Slicing{BlockSize: 64},
		SeedCommitment: jobs.CommitSeed(testSecret),
		PriceWei:       big.NewInt(1),
		Creator:        jobs.Address{1},
		Deadline:       time.Now().Add(time.Hour).Unix(),
	}
	info.ApplyDefaults()
	return info
}

// testSecret is testInfo's check seed.
var testSecret = jobs.Seed{3}

// TestSubmittedRecordRoundTrip: the local record keeps the check seed
// while the job is open, drops it once the job is over, and refuses a
// seed that is not the job's.
func TestSubmittedRecordRoundTrip(t *testing.T) {
	info := testInfo()
	key := submittedPrefix + info.ID().String()
	for _, state := range []string{stateOpen, stateDone, stateCancelled, stateFailed} {
		b, err := encodeSubmitted(info, state, testSecret)
		if err != nil {
			t.Fatal(err)
		}
		got, st, secret, err := decodeSubmitted(key, b)
		if err != nil || st != state || got.ID() != info.ID() {
			t.Fatalf("%s: %v %s", state, err, st)
		}
		if want := (state == stateOpen); (secret == testSecret) != want || !want && !secret.IsZero() {
			t.Fatalf("%s: kept secret %s", state, secret)
		}
		if _, _, _, err := decodeSubmitted(submittedPrefix+jobs.ID{}.String(), b); err == nil {
			t.Fatal("a record under another job's key decoded")
		}
	}
	wrong, _ := encodeSubmitted(info, stateOpen, jobs.Seed{4})
	for _, bad := range []string{`{}`, `{"v":1,"job":"","state":"open"}`, `{"v":2,"job":"AAAA","state":"open"}`, `{"v":2,"job":"","state":"x"}`, `[]`, string(wrong)} {
		if _, _, _, err := decodeSubmitted(key, []byte(bad)); err == nil {
			t.Errorf("decoded %s", bad)
		}
	}
}

func FuzzDecodeSubmitted(f *testing.F) {
	info := testInfo()
	key := submittedPrefix + info.ID().String()
	b, _ := encodeSubmitted(info, stateOpen, testSecret)
	f.Add(b)
	f.Add([]byte(`{"v":2,"job":"","state":"done"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, _, secret, err := decodeSubmitted(key, b)
		if err != nil {
			return
		}
		if len(b) > maxSubmitted || got.ID() != info.ID() || !secret.IsZero() && jobs.CommitSeed(secret) != info.SeedCommitment {
			t.Fatalf("accepted %d bytes for job %s", len(b), got.ID())
		}
	})
}
