package processor_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"math/big"
	"testing"
	"time"

	ethcrypto "github.com/ethereum/go-ethereum/crypto"

	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

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
		Code:           jobs.Source{URI: "ipfs://" + codeCID.String(), SHA256: sha256.Sum256(job.Code)},
		Data:           jobs.Data{Source: jobs.Source{URI: "ipfs://" + dataCID.String(), SHA256: sha256.Sum256(job.Data)}, Size: uint64(len(job.Data))},
		Slicing:        spec.Slicing,
		SeedCommitment: jobs.Seed{7},
		PriceWei:       big.NewInt(1_000_000_000_000), // above the other job's: tried first
		Creator:        jobs.Address(ethcrypto.PubkeyToAddress(key.PublicKey)),
		Deadline:       time.Now().Add(time.Hour).Unix(),
		Output:         spec.Output,
	}
	cancelled.ApplyDefaults()
	id := cancelled.ID()
	rec, err := records.SignCancel(id, key)
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
			if ok, err := records.Cancelled(ctx, mem.Store, cancelled); err != nil || !ok {
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
