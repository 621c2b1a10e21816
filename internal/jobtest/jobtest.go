// Package jobtest writes a real job's records into real replicated stores,
// for the tests of the packages that read them (meshview, processor).
package jobtest

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"
	"testing"
	"time"

	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// Info is a job of 4 one-block MicroJobs in 2 MacroJobs, each MacroJob
// with a verifier that repeats one of its blocks; seed makes its ID. Its
// creator is Creator and its check seed CheckSeed.
func Info(seed byte) *jobs.JobInfo {
	info := &jobs.JobInfo{
		Code:           jobs.Source{URI: "ipfs://bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy", SHA256: sha256.Sum256([]byte("code"))},
		Data:           jobs.Data{Source: jobs.Source{URI: "https://example.com/data", SHA256: sha256.Sum256([]byte("data"))}, Size: 4 * 64},
		Slicing:        jobs.Slicing{BlockSize: 64, MicroJobs: 2, BlocksPerMicro: 1},
		SeedCommitment: jobs.CommitSeed(CheckSeed),
		PriceWei:       big.NewInt(5),
		Creator:        jobs.Address(ethcrypto.PubkeyToAddress(Creator.PublicKey)),
		Deadline:       time.Now().Add(time.Hour).Unix() + int64(seed),
	}
	info.ApplyDefaults()
	return info
}

// Job is a sliced job whose records a test writes.
type Job struct {
	Info *jobs.JobInfo
	Plan *jobs.Plan
}

// CheckSeed is the check seed New draws verifiers from; Publish reveals
// it, as the job's DApp would.
var CheckSeed = jobs.Seed{0xc1}

// Creator is the wallet key of Info's creator.
var Creator = func() *ecdsa.PrivateKey {
	k, err := ethcrypto.ToECDSA(ethcrypto.Keccak256([]byte("jobtest creator")))
	if err != nil {
		panic(err)
	}
	return k
}()

// New slices info, with its verifiers drawn from CheckSeed.
func New(t testing.TB, info *jobs.JobInfo) *Job {
	t.Helper()
	plan, err := jobs.SliceChecked(info, CheckSeed)
	if err != nil {
		t.Fatal(err)
	}
	return &Job{Info: info, Plan: plan}
}

// ID is the job's ID.
func (j *Job) ID() jobs.ID { return j.Plan.JobID }

// Micros are MacroJob m's regular MicroJobs, or its verifier.
func (j *Job) Micros(m int, verifier bool) []jobs.MicroJob {
	var out []jobs.MicroJob
	for _, mu := range j.Plan.Macros[m].Micros {
		if mu.Verifier == verifier {
			out = append(out, mu)
		}
	}
	return out
}

// Run writes s's results of MacroJob m's regular MicroJobs, or of its
// verifier, with hash giving each block's output hash, disclosed or only
// committed.
func (j *Job) Run(t testing.TB, s *crdt.Store, m int, verifier bool, hash func(uint64) [32]byte, disclose bool) {
	t.Helper()
	for _, mu := range j.Micros(m, verifier) {
		j.Result(t, s, mu, hash, disclose)
	}
}

// HonestHash is the output hash of block b that every honest run gives.
func HonestHash(b uint64) [32]byte { return sha256.Sum256(fmt.Appendf(nil, "block %d", b)) }

// CID is a CID of s.
func CID(t testing.TB, s string) cid.Cid {
	t.Helper()
	h, err := mh.Sum([]byte(s), mh.SHA2_256, -1)
	if err != nil {
		t.Fatal(err)
	}
	return cid.NewCidV1(cid.Raw, h)
}

// Publish writes the JobInfo record and, for a job of Creator, the reveal
// of its check seed.
func (j *Job) Publish(t testing.TB, s *crdt.Store) {
	t.Helper()
	ctx := context.Background()
	if err := s.Put(ctx, records.JobKey(j.ID()), records.JobType, j.Info.Encode()); err != nil {
		t.Fatal(err)
	}
	if j.Info.SeedCommitment != jobs.CommitSeed(CheckSeed) {
		return
	}
	rec, err := records.SignReveal(j.ID(), CheckSeed, Creator)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, records.RevealKey(j.ID(), s.Self().String()), records.RevealType, rec); err != nil {
		t.Fatal(err)
	}
}

// Result writes s's commitment of mu, with hash giving each block's
// output hash, and, when disclose, its disclosure.
func (j *Job) Result(t testing.TB, s *crdt.Store, mu jobs.MicroJob, hash func(uint64) [32]byte, disclose bool) {
	t.Helper()
	d := microjob.Disclosure{
		Version: microjob.RecordVersion, JobID: j.ID(), MacroIndex: mu.Macro, MicroID: mu.ID,
		Processor: s.Self().String(), Wallet: fmt.Sprintf("0x%040x", sha256.Sum256([]byte(s.Self())))[:42],
		BlockIndices: mu.Blocks, ResultCID: CID(t, s.Self().String()+mu.ID.String()), Salt: sha256.Sum256([]byte("salt")),
	}
	for _, b := range mu.Blocks {
		d.BlockHashes = append(d.BlockHashes, hash(b))
	}
	c, err := d.Commitment()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Put(ctx, records.CommitmentKey(c), records.CommitType, c.Encode()); err != nil {
		t.Fatal(err)
	}
	if disclose {
		if err := s.Put(ctx, records.DisclosureKey(d), records.ResultType, d.Encode()); err != nil {
			t.Fatal(err)
		}
	}
}

// Records reads the job's records from s, as a query returns them.
func (j *Job) Records(t testing.TB, s *crdt.Store) *finish.Records {
	t.Helper()
	rs, err := s.Query(context.Background(), records.JobKey(j.ID())+"/")
	if err != nil {
		t.Fatal(err)
	}
	recs := finish.NewRecords()
	for _, r := range rs {
		recs.Add(j.ID(), finish.OpenPart(j.ID(), r))
	}
	return recs
}

// VerdictOf is the verdict record a finalizer holding s's records writes,
// with output out.
func (j *Job) VerdictOf(t testing.TB, s *crdt.Store, out string) records.VerdictRecord {
	t.Helper()
	recs := j.Records(t, s)
	jd, err := finish.Judge(j.Info, j.Plan, recs)
	if err != nil {
		t.Fatal(err)
	}
	if !jd.V.Verified {
		t.Fatalf("the fixture's job is not verified: %+v", jd.V)
	}
	rec := finish.VerdictFor(jd, finish.FinalRounds(j.Plan, recs))
	rec.Verdict = json.RawMessage(rec.Verdict)
	rec.Output = out
	return rec
}

// PutVerdict writes rec as s's verdict of the job.
func (j *Job) PutVerdict(t testing.TB, s *crdt.Store, rec records.VerdictRecord) {
	t.Helper()
	if err := crdt.PutJSON(context.Background(), s, records.VerdictKey(j.ID(), s.Self().String()), records.VerdictType, rec); err != nil {
		t.Fatal(err)
	}
}
