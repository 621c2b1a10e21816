package records_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	ethcrypto "github.com/ethereum/go-ethereum/crypto"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/records/recordstest"
)

func TestCancelRecordIsTheCreatorsWord(t *testing.T) {
	key, _ := ethcrypto.GenerateKey()
	other, _ := ethcrypto.GenerateKey()
	info := recordstest.CancelJob(t, jobs.Address(ethcrypto.PubkeyToAddress(key.PublicKey)))
	rec, err := records.SignCancel(info.ID(), key)
	if err != nil {
		t.Fatal(err)
	}
	if err := records.CheckCancel(info, rec); err != nil {
		t.Fatalf("the creator's cancel: %v", err)
	}
	forged, _ := records.SignCancel(info.ID(), other)
	if err := records.CheckCancel(info, forged); !errors.Is(err, records.ErrBadCancel) {
		t.Fatalf("a cancel signed by another wallet: %v", err)
	}
	otherJob := recordstest.CancelJob(t, info.Creator)
	otherJob.SeedCommitment = jobs.Seed{2}
	if err := records.CheckCancel(otherJob, rec); !errors.Is(err, records.ErrBadCancel) {
		t.Fatalf("a cancel of another job: %v", err)
	}
	// The signature is over the job ID: moving it to another job fails.
	moved := bytes.Replace(rec, []byte(info.ID().String()), []byte(otherJob.ID().String()), 1)
	if err := records.CheckCancel(otherJob, moved); !errors.Is(err, records.ErrBadCancel) {
		t.Fatalf("a signature moved to another job: %v", err)
	}
	for _, bad := range []string{``, `{}`, `{"job":"x","signature":"00"}`, `{"job":"` + info.ID().String() + `","signature":"` + strings.Repeat("zz", 65) + `"}`,
		`{"job":"a","signature":"b","extra":1}`, `{"job":"` + strings.Repeat("a", 2000) + `","signature":""}`} {
		if err := records.CheckCancel(info, []byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func FuzzDecodeCancel(f *testing.F) {
	key, _ := ethcrypto.GenerateKey()
	info := recordstest.CancelJob(f, jobs.Address(ethcrypto.PubkeyToAddress(key.PublicKey)))
	rec, _ := records.SignCancel(info.ID(), key)
	f.Add(rec)
	f.Add([]byte(`{"job":"","signature":""}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := records.DecodeCancel(b)
		if err != nil {
			return
		}
		if len(b) > 1<<10 {
			t.Fatalf("decoded %d bytes past the limit", len(b))
		}
		// Only the creator's own record checks.
		if records.CheckCancel(info, b) == nil && !bytes.Equal(b, rec) && r.Job != info.ID().String() {
			t.Fatalf("accepted a record for %q", r.Job)
		}
	})
}
