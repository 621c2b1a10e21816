package processor

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobindex"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// jobFixture is a real job whose records tests write to real replicated
// stores: roundsInfo's two MacroJobs, each of two regular one-block
// MicroJobs and a verifier that repeats one of their blocks.
type jobFixture struct {
	info *jobs.JobInfo
	plan *jobs.Plan
}

func newJobFixture(t *testing.T, seed byte) *jobFixture {
	t.Helper()
	info := roundsInfo(seed)
	plan, err := jobs.Slice(info)
	if err != nil {
		t.Fatal(err)
	}
	return &jobFixture{info: info, plan: plan}
}

func (f *jobFixture) id() jobs.ID { return f.plan.JobID }

// micros are MacroJob m's regular MicroJobs, or its verifier.
func (f *jobFixture) micros(m int, verifier bool) []jobs.MicroJob {
	var out []jobs.MicroJob
	for _, mu := range f.plan.Macros[m].Micros {
		if mu.Verifier == verifier {
			out = append(out, mu)
		}
	}
	return out
}

// run writes s's results of MacroJob m's regular MicroJobs, or of its
// verifier, with hash giving each block's output hash, disclosed or only
// committed.
func (f *jobFixture) run(t *testing.T, s *crdt.Store, m int, verifier bool, hash func(uint64) [32]byte, disclose bool) {
	t.Helper()
	for _, mu := range f.micros(m, verifier) {
		f.result(t, s, mu, hash, disclose)
	}
}

// honestHash is the output hash of block b that every honest run gives.
func honestHash(b uint64) [32]byte { return sha256.Sum256(fmt.Appendf(nil, "block %d", b)) }

// testCID is a CID of s.
func testCID(t *testing.T, s string) cid.Cid {
	t.Helper()
	h, err := mh.Sum([]byte(s), mh.SHA2_256, -1)
	if err != nil {
		t.Fatal(err)
	}
	return cid.NewCidV1(cid.Raw, h)
}

// publish writes the JobInfo record.
func (f *jobFixture) publish(t *testing.T, s *crdt.Store) {
	t.Helper()
	if err := s.Put(context.Background(), records.JobKey(f.id()), records.JobType, f.info.Encode()); err != nil {
		t.Fatal(err)
	}
}

// result writes s's commitment of mu, with hash giving each block's
// output hash, and, when disclose, its disclosure.
func (f *jobFixture) result(t *testing.T, s *crdt.Store, mu jobs.MicroJob, hash func(uint64) [32]byte, disclose bool) {
	t.Helper()
	d := microjob.Disclosure{
		Version: microjob.RecordVersion, JobID: f.id(), MacroIndex: mu.Macro, MicroID: mu.ID,
		Processor: s.Self().String(), Wallet: fmt.Sprintf("0x%040x", sha256.Sum256([]byte(s.Self())))[:42],
		BlockIndices: mu.Blocks, ResultCID: testCID(t, s.Self().String()+mu.ID.String()), Salt: sha256.Sum256([]byte("salt")),
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

// records reads the job's records from s, as a query returns them.
func (f *jobFixture) records(t *testing.T, s *crdt.Store) *finish.Records {
	t.Helper()
	recs, err := jobindex.New(s).Query(context.Background(), f.id())
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// verdictOf is the verdict record a finalizer holding s's records writes,
// with output out.
func (f *jobFixture) verdictOf(t *testing.T, s *crdt.Store, out string) records.VerdictRecord {
	t.Helper()
	recs := f.records(t, s)
	j, err := finish.Judge(f.info, f.plan, recs)
	if err != nil {
		t.Fatal(err)
	}
	if !j.V.Verified {
		t.Fatalf("the fixture's job is not verified: %+v", j.V)
	}
	rec := finish.VerdictFor(j, finish.FinalRounds(f.plan, recs))
	rec.Verdict = json.RawMessage(rec.Verdict)
	rec.Output = out
	return rec
}

// putVerdict writes rec as s's verdict of the job.
func (f *jobFixture) putVerdict(t *testing.T, s *crdt.Store, rec records.VerdictRecord) {
	t.Helper()
	if err := crdt.PutJSON(context.Background(), s, records.VerdictKey(f.id(), s.Self().String()), records.VerdictType, rec); err != nil {
		t.Fatal(err)
	}
}
