package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/internal/jobtest"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/meshclient"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// The replicas of the undecided tests' cluster: the serving node (also
// the DApp's), and the processors a, b (the sides), c and d (re-runners).
const (
	serving = iota
	procA
	procB
	procC
	procD
)

// voteJob is a job whose records the cluster's replicas write as its
// processors would: two MacroJobs, each of two regular one-block
// MicroJobs and a verifier that repeats one of their blocks.
type voteJob struct {
	t      *testing.T
	c      *crdttest.Cluster
	info   *jobs.JobInfo
	plan   *jobs.Plan // with its checks
	writes int        // records written under the job's key
}

// newVoteJob publishes job n (jobtest.Info) from the serving replica,
// which reveals its check seed.
func newVoteJob(t *testing.T, c *crdttest.Cluster, n byte) *voteJob {
	t.Helper()
	info, seed := jobtest.Info(n), jobtest.CheckSeed
	plan, err := jobs.SliceChecked(info, seed)
	if err != nil {
		t.Fatal(err)
	}
	j := &voteJob{t: t, c: c, info: info, plan: plan}
	if err := c.Replicas[serving].Store.Put(context.Background(), records.JobKey(info.ID()), records.JobType, info.Encode()); err != nil {
		t.Fatal(err)
	}
	reveal, err := records.SignReveal(info.ID(), seed, jobtest.Creator)
	if err != nil {
		t.Fatal(err)
	}
	j.put(serving, records.RevealKey(info.ID(), j.peer(serving)), records.RevealType, reveal)
	return j
}

func (j *voteJob) peer(i int) string { return j.c.Replicas[i].ID().String() }

func (j *voteJob) put(i int, key, typ string, payload []byte) {
	j.t.Helper()
	if err := j.c.Replicas[i].Store.Put(context.Background(), key, typ, payload); err != nil {
		j.t.Fatal(err)
	}
	j.writes++
}

func (j *voteJob) putJSON(i int, key, typ string, v any) {
	j.t.Helper()
	e, err := crdt.JSONEntry(key, typ, v)
	if err != nil {
		j.t.Fatal(err)
	}
	j.put(i, e.Key, e.Type, e.Payload)
}

// blockHash is block b's output hash: the honest one, or a liar's.
func blockHash(b uint64, lie bool) [32]byte {
	if lie {
		return sha256.Sum256(fmt.Appendf(nil, "lie %d", b))
	}
	return jobtest.HonestHash(b)
}

// run has processor i commit and disclose MicroJob slots of MacroJob m.
func (j *voteJob) run(i int, m int, slots []int, lie bool) {
	j.t.Helper()
	for _, s := range slots {
		mu := j.plan.Macros[m].Micros[s]
		h, _ := mh.Sum([]byte(j.peer(i)+mu.ID.String()), mh.SHA2_256, -1)
		d := microjob.Disclosure{
			Version: microjob.RecordVersion, JobID: j.plan.JobID, MacroIndex: mu.Macro, MicroID: mu.ID,
			Processor: j.peer(i), Wallet: fmt.Sprintf("0x%040x", i+1), BlockIndices: mu.Blocks,
			ResultCID: cid.NewCidV1(cid.Raw, h), Salt: [32]byte{1},
		}
		for _, b := range mu.Blocks {
			d.BlockHashes = append(d.BlockHashes, blockHash(b, lie))
		}
		c, err := d.Commitment()
		if err != nil {
			j.t.Fatal(err)
		}
		j.put(i, records.CommitmentKey(c), records.CommitType, c.Encode())
		j.put(i, records.DisclosureKey(d), records.ResultType, d.Encode())
	}
}

// rerun has re-runner i store its answer for block b.
func (j *voteJob) rerun(i int, b uint64, lie bool) {
	h := blockHash(b, lie)
	j.putJSON(i, records.RerunKey(j.plan.JobID, b, j.peer(i)), records.RerunType,
		records.Rerun{Block: b, Hash: hex.EncodeToString(h[:]), Processor: j.peer(i)})
}

// judge waits until the serving replica holds every record written, and
// judges them by the finishing rules.
func (j *voteJob) judge() finish.Judgement {
	j.t.Helper()
	var recs []crdt.Record
	crdttest.WaitUntil(j.t, 20*time.Second, func() error {
		var err error
		recs, err = j.c.Replicas[serving].Store.Query(context.Background(), records.JobKey(j.plan.JobID)+"/")
		if err == nil && len(recs) != j.writes {
			err = fmt.Errorf("%d of %d records replicated", len(recs), j.writes)
		}
		return err
	})
	jg, err := finish.Judge(j.info, j.plan, finish.FromRecords(j.plan.JobID, recs))
	if err != nil {
		j.t.Fatal(err)
	}
	return jg
}

// disputeVote has a liar (a) and an honest verifier (b) disagree on a
// block, b ask c and the others of more to re-run it with the pool
// exhausted, and the re-runners answer honestly: the vote is the honest
// side's 1 + len(more) + 1 against the liar's 1.
func disputeVote(t *testing.T, c *crdttest.Cluster, n byte, more []int) (*voteJob, microjob.Dispute) {
	j := newVoteJob(t, c, n)
	j.run(procA, 0, []int{0, 1}, true)
	j.run(procA, 1, []int{0, 1}, false)
	j.run(procB, 0, []int{j.plan.Macros[0].Regular}, false)
	j.run(procB, 1, []int{j.plan.Macros[1].Regular}, false)
	jg := j.judge()
	if len(jg.V.Disputes) != 1 {
		t.Fatalf("disputes %+v, want one", jg.V.Disputes)
	}
	d := jg.V.Disputes[0]
	rec := records.Dispute{Dispute: d, Third: j.peer(procC), Exhausted: true}
	for _, i := range more {
		rec.More = append(rec.More, j.peer(i))
	}
	j.putJSON(procB, records.DisputeKey(j.plan.JobID, d.Block, j.peer(procB)), records.DisputeType, rec)
	for _, i := range append([]int{procC}, more...) {
		j.rerun(i, d.Block, false)
	}
	j.judge()
	return j, d
}

// TestUndecidedJobState: a job whose disputed block's vote is undecided
// is "undecided" on GET /v1/jobs/{id}, with the block, its sides, the
// votes and the reason; a decided dispute names its culprit and leaves the
// job running; a self-checked block whose vote is undecided makes the job
// undecided too. The records are the processors' own, replicated, and the
// states are the finishing rules' judgement of them.
func TestUndecidedJobState(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 5})
	srv := newStoreServer(t, c.Replicas[serving].Store)
	cl, ctx := meshclient.New(srv), context.Background()

	undecided, d := disputeVote(t, c, 1, nil)
	got, err := cl.Job(ctx, undecided.plan.JobID.String())
	if err != nil {
		t.Fatal(err)
	}
	honest, lie := blockHash(d.Block, false), blockHash(d.Block, true)
	want := apiv1.UndecidedBlock{Block: d.Block, Kind: apiv1.UndecidedDispute, Sides: d.Processors[:],
		Votes: map[string]int{hex.EncodeToString(honest[:]): 2, hex.EncodeToString(lie[:]): 1}}
	if got.State != apiv1.JobUndecided || len(got.Undecided) != 1 || got.Verified || got.OutputCID != "" {
		t.Fatalf("undecided dispute: state %s, undecided %+v", got.State, got.Undecided)
	}
	u := got.Undecided[0]
	if !slices.Contains(u.Sides, undecided.peer(procA)) || !slices.Contains(u.Sides, undecided.peer(procB)) ||
		u.Block != want.Block || u.Kind != want.Kind || !slices.Equal(u.Sides, want.Sides) ||
		fmt.Sprint(u.Votes) != fmt.Sprint(want.Votes) || !strings.Contains(u.Reason, "no re-runner left") {
		t.Fatalf("undecided block %+v, want %+v and a reason", u, want)
	}

	decided, _ := disputeVote(t, c, 2, []int{procD})
	if got, err := cl.Job(ctx, decided.plan.JobID.String()); err != nil || got.State != apiv1.JobRunning || got.Undecided != nil {
		t.Fatalf("decided dispute: %+v (%v), want running", got, err)
	}
	if jg := decided.judge(); !slices.Equal(jg.Culprits, []string{decided.peer(procA)}) {
		t.Fatalf("decided dispute names %v, want a", jg.Culprits)
	}

	checked := selfCheckVote(t, c, 3)
	got, err = cl.Job(ctx, checked.plan.JobID.String())
	if err != nil || got.State != apiv1.JobUndecided || len(got.Undecided) != 1 {
		t.Fatalf("undecided self-check: %+v (%v)", got, err)
	}
	if u := got.Undecided[0]; u.Kind != apiv1.UndecidedSelfCheck || !slices.Equal(u.Sides, []string{checked.peer(procA)}) {
		t.Fatalf("undecided self-check block %+v", u)
	}

	// The listing judges the same.
	list, err := cl.Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]apiv1.JobState{}
	for _, j := range list {
		states[j.ID] = j.State
	}
	if states[undecided.plan.JobID.String()] != apiv1.JobUndecided || states[decided.plan.JobID.String()] != apiv1.JobRunning ||
		states[checked.plan.JobID.String()] != apiv1.JobUndecided {
		t.Fatalf("listed states %v", states)
	}
}

// selfCheckVote has a liar (a) run the whole of MacroJob 0, verifier
// included, so that its checked block is self-checked; b asks c and d to
// re-run it with the pool exhausted, and d lies as a does: 2 votes against 1.
func selfCheckVote(t *testing.T, c *crdttest.Cluster, n byte) *voteJob {
	j := newVoteJob(t, c, n)
	j.run(procA, 0, []int{0, 1, j.plan.Macros[0].Regular}, true)
	j.run(procB, 1, []int{0, 1}, false)
	j.run(procC, 1, []int{j.plan.Macros[1].Regular}, false)
	jg := j.judge()
	scs := finish.SelfChecked(j.plan, jg.V)
	if len(scs) != 1 || scs[0].Processor != j.peer(procA) {
		t.Fatalf("self-checked %+v, want one block of a", scs)
	}
	sc := scs[0]
	j.putJSON(procB, records.CheckKey(j.plan.JobID, sc.Block, j.peer(procB)), records.CheckType, records.Check{
		Block: sc.Block, Processor: sc.Processor, Hash: sc.Hash, Thirds: [2]string{j.peer(procC), j.peer(procD)}, Exhausted: true})
	j.rerun(procC, sc.Block, false)
	j.rerun(procD, sc.Block, true)
	j.judge()
	return j
}

// newStoreServer serves the API of a node that has nothing but store.
func newStoreServer(t *testing.T, store *crdt.Store) string {
	srv := httptest.NewServer(api.NewHandler(api.Deps{Store: store, Metrics: prometheus.NewRegistry()}, api.DefaultConfig()))
	t.Cleanup(srv.Close)
	return srv.URL
}
