package processor_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	ethcrypto "github.com/ethereum/go-ethereum/crypto"

	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

func cancelJob(t testing.TB, creator jobs.Address) *jobs.JobInfo {
	t.Helper()
	info := &jobs.JobInfo{
		Code:     jobs.Source{URI: "ipfs://bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy", SHA256: sha256.Sum256([]byte("code"))},
		Data:     jobs.Data{Source: jobs.Source{URI: "https://example.com/data", SHA256: sha256.Sum256([]byte("data"))}, Size: 4},
		Slicing:  jobs.Slicing{BlockSize: 64},
		Seed:     jobs.Seed{1},
		PriceWei: big.NewInt(5),
		Creator:  creator,
		Deadline: time.Now().Add(time.Hour).Unix(),
	}
	info.ApplyDefaults()
	return info
}

func TestCancelRecordIsTheCreatorsWord(t *testing.T) {
	key, _ := ethcrypto.GenerateKey()
	other, _ := ethcrypto.GenerateKey()
	info := cancelJob(t, jobs.Address(ethcrypto.PubkeyToAddress(key.PublicKey)))
	rec, err := processor.SignCancel(info.ID(), key)
	if err != nil {
		t.Fatal(err)
	}
	if err := processor.CheckCancel(info, rec); err != nil {
		t.Fatalf("the creator's cancel: %v", err)
	}
	forged, _ := processor.SignCancel(info.ID(), other)
	if err := processor.CheckCancel(info, forged); !errors.Is(err, processor.ErrBadCancel) {
		t.Fatalf("a cancel signed by another wallet: %v", err)
	}
	otherJob := cancelJob(t, info.Creator)
	otherJob.Seed = jobs.Seed{2}
	if err := processor.CheckCancel(otherJob, rec); !errors.Is(err, processor.ErrBadCancel) {
		t.Fatalf("a cancel of another job: %v", err)
	}
	// The signature is over the job ID: moving it to another job fails.
	moved := bytes.Replace(rec, []byte(info.ID().String()), []byte(otherJob.ID().String()), 1)
	if err := processor.CheckCancel(otherJob, moved); !errors.Is(err, processor.ErrBadCancel) {
		t.Fatalf("a signature moved to another job: %v", err)
	}
	for _, bad := range []string{``, `{}`, `{"job":"x","signature":"00"}`, `{"job":"` + info.ID().String() + `","signature":"` + strings.Repeat("zz", 65) + `"}`,
		`{"job":"a","signature":"b","extra":1}`, `{"job":"` + strings.Repeat("a", 2000) + `","signature":""}`} {
		if err := processor.CheckCancel(info, []byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func FuzzDecodeCancel(f *testing.F) {
	key, _ := ethcrypto.GenerateKey()
	info := cancelJob(f, jobs.Address(ethcrypto.PubkeyToAddress(key.PublicKey)))
	rec, _ := processor.SignCancel(info.ID(), key)
	f.Add(rec)
	f.Add([]byte(`{"job":"","signature":""}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := processor.DecodeCancel(b)
		if err != nil {
			return
		}
		if len(b) > 1<<10 {
			t.Fatalf("decoded %d bytes past the limit", len(b))
		}
		// Only the creator's own record checks.
		if processor.CheckCancel(info, b) == nil && !bytes.Equal(b, rec) && r.Job != info.ID().String() {
			t.Fatalf("accepted a record for %q", r.Job)
		}
	})
}

// TestProcessorsSkipCancelledJob: a job with its creator's cancel record
// is never worked on, while a job published after it runs to its verdict.
func TestProcessorsSkipCancelledJob(t *testing.T) {
	m := flowMesh(t, 2, nil)
	c := client(m)
	ctx := context.Background()
	job := newMandelbrot(t, 64, 64, 32)

	key, _ := ethcrypto.GenerateKey()
	spec := job.spec(2, 1)
	codeCID, err := c.IPFS.AddFile(ctx, bytes.NewReader(job.Code))
	if err != nil {
		t.Fatal(err)
	}
	dataCID, err := c.IPFS.AddFile(ctx, bytes.NewReader(job.Data))
	if err != nil {
		t.Fatal(err)
	}
	cancelled := &jobs.JobInfo{
		Code:     jobs.Source{URI: "ipfs://" + codeCID.String(), SHA256: sha256.Sum256(job.Code)},
		Data:     jobs.Data{Source: jobs.Source{URI: "ipfs://" + dataCID.String(), SHA256: sha256.Sum256(job.Data)}, Size: uint64(len(job.Data))},
		Slicing:  spec.Slicing,
		Seed:     jobs.Seed{7},
		PriceWei: big.NewInt(1_000_000_000_000), // above the other job's: tried first
		Creator:  jobs.Address(ethcrypto.PubkeyToAddress(key.PublicKey)),
		Deadline: time.Now().Add(time.Hour).Unix(),
		Output:   spec.Output,
	}
	cancelled.ApplyDefaults()
	id := cancelled.ID()
	rec, err := processor.SignCancel(id, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Store.Put(ctx, records.CancelKey(id), records.CancelType, rec); err != nil {
		t.Fatal(err)
	}
	// Every processor holds the cancel before the job: replicas may apply
	// separate writes in any order, and a processor that saw the job first
	// would rightly have started on it.
	wait.Until(t, 30*time.Second, func() error {
		for _, mem := range m.Running() {
			if mem.Worker == nil {
				continue
			}
			if ok, err := processor.Cancelled(ctx, mem.Store, cancelled); err != nil || !ok {
				return fmt.Errorf("processor %d: cancelled %v (%v)", mem.Index, ok, err)
			}
		}
		return nil
	})
	if err := c.Store.Put(ctx, records.JobKey(id), records.JobType, cancelled.Encode()); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 30*time.Second, func() error {
		for _, mem := range m.Running() {
			if _, err := mem.Store.Get(ctx, records.JobKey(id)); err != nil {
				return err
			}
		}
		return nil
	})
	runJob(t, m, spec, 2*time.Minute)
	recs, err := c.Store.Query(ctx, records.JobKey(id)+"/")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		k, err := records.Parse(r.Key)
		if err == nil && k.Type == records.CommitType {
			t.Fatalf("a processor worked on the cancelled job: %s", r.Key)
		}
		if err == nil && k.Type == records.VerdictType && k.Job == id {
			t.Fatal("the cancelled job has a verdict")
		}
	}
}
