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
		Code:     jobs.Source{URI: "https://example.com/code.wasm", SHA256: sha256.Sum256([]byte("c"))},
		Data:     jobs.Data{Source: jobs.Source{URI: "https://example.com/data", SHA256: sha256.Sum256([]byte("d"))}, Size: 1},
		Slicing:  jobs.Slicing{BlockSize: 64},
		SeedCommitment:     jobs.Seed{3},
		PriceWei: big.NewInt(1),
		Creator:  jobs.Address{1},
		Deadline: time.Now().Add(time.Hour).Unix(),
	}
	info.ApplyDefaults()
	return info
}

func TestSubmittedRecordRoundTrip(t *testing.T) {
	info := testInfo()
	key := submittedPrefix + info.ID().String()
	for _, state := range []string{stateOpen, stateDone, stateCancelled} {
		b, err := encodeSubmitted(info, state)
		if err != nil {
			t.Fatal(err)
		}
		got, st, err := decodeSubmitted(key, b)
		if err != nil || st != state || got.ID() != info.ID() {
			t.Fatalf("%s: %v %s", state, err, st)
		}
		if _, _, err := decodeSubmitted(submittedPrefix+jobs.ID{}.String(), b); err == nil {
			t.Fatal("a record under another job's key decoded")
		}
	}
	for _, bad := range []string{`{}`, `{"v":2,"job":"","state":"open"}`, `{"v":1,"job":"AAAA","state":"open"}`, `{"v":1,"job":"","state":"x"}`, `[]`} {
		if _, _, err := decodeSubmitted(key, []byte(bad)); err == nil {
			t.Errorf("decoded %s", bad)
		}
	}
}

func FuzzDecodeSubmitted(f *testing.F) {
	info := testInfo()
	key := submittedPrefix + info.ID().String()
	b, _ := encodeSubmitted(info, stateOpen)
	f.Add(b)
	f.Add([]byte(`{"v":1,"job":"","state":"done"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, _, err := decodeSubmitted(key, b)
		if err != nil {
			return
		}
		if len(b) > maxSubmitted || got.ID() != info.ID() {
			t.Fatalf("accepted %d bytes for job %s", len(b), got.ID())
		}
	})
}
