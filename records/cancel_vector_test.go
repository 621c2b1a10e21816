package records_test

import (
	"encoding/hex"
	"testing"

	ethcrypto "github.com/ethereum/go-ethereum/crypto"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// TestCancelVector pins the cancel digest and signature (docs/PROTOCOL.md):
// creator key 1, job ID all zeros. go-ethereum signs deterministically
// (RFC 6979).
func TestCancelVector(t *testing.T) {
	key, err := ethcrypto.HexToECDSA("0000000000000000000000000000000000000000000000000000000000000001")
	if err != nil {
		t.Fatal(err)
	}
	d := records.CancelDigest(jobs.ID{})
	rec, err := records.SignCancel(jobs.ID{}, key)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(d[:]); got != wantCancelDigest {
		t.Fatalf("digest %s, want %s", got, wantCancelDigest)
	}
	if string(rec) != wantCancelRecord {
		t.Fatalf("record %s\nwant %s", rec, wantCancelRecord)
	}
}

const (
	wantCancelDigest = "3a530047c2af4360e56db3685010f15b5ccb9957e88e0b34d20060e92f697a7d"
	wantCancelRecord = `{"job":"0000000000000000000000000000000000000000000000000000000000000000","signature":"00df3b658b788979201e0eb758a3c84c6517308fa05972a71287020d2d6458e63582e6a3130321044bb5788650d0bd373fbf7659de4cbb6114742ee0c2ab85f901"}`
)
