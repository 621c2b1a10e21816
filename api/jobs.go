package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/settlement"
)

// ErrNoSuchJob: the node's store holds no job with that ID.
var ErrNoSuchJob = errors.New("api: no such job")

// maxPlans bounds the slicing plans a JobView keeps.
const maxPlans = 256

// JobView derives job summaries from a node's replicated store and, when
// the node has one, its chain. Every node derives the same summary from
// the same store, except Mine and what the chain adds.
type JobView struct {
	Store crdt.Reader
	// Chain, when set, adds the escrow's state and payouts.
	Chain *escrow.Client
	// Mine reports whether this node submitted a job; nil: none.
	Mine func(jobs.ID) bool
	// Blocks reads verdicts kept in an IPFS body; nil: such a job's
	// summary is an error (records.ErrBodyNotFetched).
	Blocks records.BodyReader
	// Log receives what the view cannot show in a summary; nil:
	// slog.Default().
	Log *slog.Logger
	// FailReports is F, how many processors must report the same failure
	// of a job (dapp.ReadFailure); 0: 2.
	FailReports int
	// Holds reports whether this node holds job id's own records (see
	// Deps.Holds); nil: it holds every job's.
	Holds func(id jobs.ID) bool

	mu        sync.Mutex
	plans     map[jobs.ID]*jobs.Plan
	undecided map[jobs.ID]undecidedMemo // undecided.go
}

func (v *JobView) logger() *slog.Logger {
	if v.Log == nil {
		return slog.Default()
	}
	return v.Log
}

// storedJob is a job record of the store and its JobInfo.
type storedJob struct {
	info *jobs.JobInfo
	rec  crdt.Record
}

// jobsInStore returns every well-formed job record of the store: of type
// job, decoding to a JobInfo whose ID names its key.
func (v *JobView) jobsInStore(ctx context.Context) ([]storedJob, error) {
	recs, err := v.Store.Query(ctx, records.JobsPrefix)
	if err != nil {
		return nil, err
	}
	var out []storedJob
	for _, r := range recs {
		if r.Type != records.JobType {
			continue
		}
		info, err := jobs.Decode(r.Payload)
		if err != nil || records.JobKey(info.ID()) != r.Key {
			continue
		}
		out = append(out, storedJob{info, r})
	}
	return out, nil
}

// List returns the summary of every job in the store, newest first.
func (v *JobView) List(ctx context.Context) ([]apiv1.Job, error) {
	stored, err := v.jobsInStore(ctx)
	if err != nil {
		return nil, err
	}
	out := []apiv1.Job{}
	for _, sj := range stored {
		j, err := v.summary(ctx, sj.info, sj.rec)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	slices.SortFunc(out, func(a, b apiv1.Job) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// Summary returns one job's summary; ErrNoSuchJob when the store has no
// such job.
func (v *JobView) Summary(ctx context.Context, id jobs.ID) (apiv1.Job, error) {
	info, r, err := v.load(ctx, id)
	if err != nil {
		return apiv1.Job{}, err
	}
	return v.summary(ctx, info, r)
}

// load reads job id's record and JobInfo; ErrNoSuchJob when the store has
// no such job.
func (v *JobView) load(ctx context.Context, id jobs.ID) (*jobs.JobInfo, crdt.Record, error) {
	r, err := v.Store.Get(ctx, records.JobKey(id))
	if errors.Is(err, crdt.ErrNotFound) {
		return nil, r, fmt.Errorf("%w: %s", ErrNoSuchJob, id)
	}
	if err != nil {
		return nil, r, err
	}
	info, err := jobs.Decode(r.Payload)
	if err != nil || info.ID() != id {
		return nil, r, fmt.Errorf("%w: %s: the stored record is not that job", ErrNoSuchJob, id)
	}
	return info, r, nil
}

func (v *JobView) plan(info *jobs.JobInfo) (*jobs.Plan, error) {
	id := info.ID()
	v.mu.Lock()
	p := v.plans[id]
	v.mu.Unlock()
	if p != nil {
		return p, nil
	}
	p, err := jobs.Slice(info)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	if v.plans == nil || len(v.plans) >= maxPlans {
		v.plans = map[jobs.ID]*jobs.Plan{}
	}
	v.plans[id] = p
	v.mu.Unlock()
	return p, nil
}

func (v *JobView) summary(ctx context.Context, info *jobs.JobInfo, rec crdt.Record) (apiv1.Job, error) {
	id := info.ID()
	plan, err := v.plan(info)
	if err != nil {
		return apiv1.Job{}, fmt.Errorf("api: job %s does not slice: %w", id, err)
	}
	j := apiv1.Job{
		ID:          id.String(),
		Creator:     info.Creator.String(),
		PriceWei:    info.PriceWei.String(),
		Deadline:    time.Unix(info.Deadline, 0).UTC(),
		CodeURI:     info.Code.URI,
		DataURI:     info.Data.URI,
		DataSize:    info.Data.Size,
		Output:      info.Output.Kind,
		MacroJobs:   len(plan.Macros),
		MicroJobs:   plan.NumWithChecks(),
		Blocks:      plan.NumBlocks,
		ByProcessor: map[string]int{},
		Culprits:    []string{},
		Holders:     []string{},
		Updated:     rec.Time().UTC(),
	}
	if v.Mine != nil {
		j.Mine = v.Mine(id)
	}
	recs, err := v.addProgress(ctx, id, &j)
	if err != nil {
		return apiv1.Job{}, err
	}
	verdict, err := v.addVerdict(ctx, info, &j)
	if err != nil {
		return apiv1.Job{}, err
	}
	if !verdict {
		v.addUndecided(info, plan, recs, &j)
	}
	failure := v.failure(id, recs, verdict, &j)
	if err := v.addEscrow(ctx, info, verdict, failure, &j); err != nil {
		return apiv1.Job{}, err
	}
	return j, nil
}

// failure is the failure enough processors report of a job without a
// verdict among its records (dapp.AgreedFailure); without a chain it
// makes the job failed, with one the escrow decides (addEscrow). Nil when
// there is none.
func (v *JobView) failure(id jobs.ID, recs []crdt.Record, verdict bool, j *apiv1.Job) *apiv1.JobFailure {
	if verdict || j.State == apiv1.JobCancelled {
		return nil
	}
	f := v.FailReports
	if f <= 0 {
		f = 2
	}
	fail, ok := dapp.AgreedFailure(records.FailuresIn(id, recs), f)
	if !ok {
		return nil
	}
	if v.Chain == nil {
		j.State, j.Failure = apiv1.JobFailed, &fail
	}
	return &fail
}

// addProgress counts the MicroJobs of job id with a commitment and with a
// disclosure, and who committed them. It returns the job's records, for
// judging without reading them again.
func (v *JobView) addProgress(ctx context.Context, id jobs.ID, j *apiv1.Job) ([]crdt.Record, error) {
	// The store has checked each record's signature and that its author
	// is the processor its key names.
	recs, err := v.Store.Query(ctx, records.JobKey(id)+"/")
	if err != nil {
		return nil, err
	}
	committed, disclosed := map[jobs.ID]bool{}, map[jobs.ID]bool{}
	for _, r := range recs {
		if t := r.Time(); t.After(j.Updated) {
			j.Updated = t.UTC()
		}
		k, err := records.Parse(r.Key)
		if err != nil || k.Job != id || k.Peer != r.AuthorText() {
			continue
		}
		switch k.Type {
		case records.CommitType:
			if !committed[k.Micro] {
				committed[k.Micro] = true
			}
			j.ByProcessor[k.Peer]++
		case records.ResultType:
			disclosed[k.Micro] = true
		}
	}
	j.Committed, j.Disclosed = len(committed), len(disclosed)
	return recs, nil
}

// addVerdict sets the job's state from its verdict, or else from its
// progress and a cancel, with the holders of its output. It reports
// whether this node holds the verdict.
func (v *JobView) addVerdict(ctx context.Context, info *jobs.JobInfo, j *apiv1.Job) (bool, error) {
	id := info.ID()
	res, verdict, err := dapp.LoadStatus(ctx, v.Store, v.Blocks, id)
	if err != nil {
		return false, err
	}
	// Once there is a verdict, only the holders of its output count.
	held := cid.Undef
	if verdict {
		held = res.Output
	}
	holders, err := records.HoldersOf(ctx, v.Store, id, held)
	if err != nil {
		return false, err
	}
	for _, h := range holders {
		j.Holders = append(j.Holders, h.String())
	}
	switch {
	case verdict:
		j.State = apiv1.JobVerified
		j.Verified = res.Verdict.Verified
		j.Culprits = append(j.Culprits, res.Culprits...)
		slices.Sort(j.Culprits)
		j.OutputCID = res.Output.String()
		j.VerifierHashes = maps.Clone(res.Verdict.VerifierHashes)
		j.VerifierDigest = strings.TrimPrefix(records.VerifierDigest(res.Verdict).Hex(), "0x")
		// The verdict's credits replace the raw commitment counts: a
		// culprit's or a duplicate's work is not credited.
		j.ByProcessor = maps.Clone(res.Verdict.Counts)
		if j.ByProcessor == nil {
			j.ByProcessor = map[string]int{}
		}
	case j.Committed > 0:
		j.State = apiv1.JobRunning
	default:
		j.State = apiv1.JobOpen
	}
	if !verdict {
		// The creator's signed cancel record withdraws a job on any mesh.
		if ok, err := records.Cancelled(ctx, v.Store, info); err == nil && ok {
			j.State = apiv1.JobCancelled
		}
	}
	return verdict, nil
}

// addEscrow sets the job's state from its escrow, with the settlement's
// payouts and refund, on a node with a chain; verdict says whether this
// node holds the job's verdict, failure the failure its processors
// report (nil: none). A job settled with a zero resultRoot (a failure
// settlement) and one refunded while no processor had joined it are
// failed.
func (v *JobView) addEscrow(ctx context.Context, info *jobs.JobInfo, verdict bool, failure *apiv1.JobFailure, j *apiv1.Job) error {
	id := info.ID()
	if v.Chain == nil {
		return nil
	}
	rel, ej, err := v.Chain.Released(ctx, escrow.JobKey(common.Address(info.Creator), common.Hash(id)))
	if err != nil {
		return fmt.Errorf("api: reading the escrow of job %s: %w", id, err)
	}
	switch ej.State {
	case escrow.JobNone:
		j.State = apiv1.JobUnfunded
	case escrow.JobRefunded:
		j.State = apiv1.JobRefunded
		if ej.Amount != nil {
			j.RefundWei = ej.Amount.String()
		}
		if ej.Members == 0 {
			f := dapp.NoProcessorFailure()
			j.State, j.Failure = apiv1.JobFailed, &f
		}
	case escrow.JobAborted:
		j.State = apiv1.JobCancelled
	case escrow.JobSettled:
		// Settled is terminal, so on a node that holds the job's records
		// it waits until the replica also holds the verdict (output,
		// verifier hashes): a client that sees "settled" finds the whole
		// result. A node that does not hold them (outside the job, or
		// past its retention) shows the outcome summary.
		switch {
		case verdict:
			j.State = apiv1.JobSettled
		case v.outside(id):
			if err := v.fromSummary(ctx, id, rel, j); err != nil {
				return err
			}
		}
		if rel.ResultRoot == (common.Hash{}) && failure != nil {
			j.State, j.Failure = apiv1.JobFailed, failure
		}
		j.SettlementTx = rel.TxHash.Hex()
		j.Payouts = map[string]string{}
		for i, p := range rel.Payees {
			j.Payouts[strings.ToLower(p.Hex())] = rel.Amounts[i].String()
		}
		j.RefundWei = rel.Refund.String()
	}
	return nil
}

// outside reports whether this node does not hold job id's own records
// (Holds): its settled state comes from the outcome summary.
func (v *JobView) outside(id jobs.ID) bool { return v.Holds != nil && !v.Holds(id) }

// summarized returns the output root of a settled job whose records this
// node does not hold (Holds), from its outcome summary checked against
// the chain's release; false where there is none, or no chain.
func (v *JobView) summarized(ctx context.Context, info *jobs.JobInfo) (cid.Cid, bool, error) {
	id := info.ID()
	if v.Chain == nil || !v.outside(id) {
		return cid.Undef, false, nil
	}
	rel, ej, err := v.Chain.Released(ctx, escrow.JobKey(common.Address(info.Creator), common.Hash(id)))
	if err != nil {
		return cid.Undef, false, fmt.Errorf("api: reading the escrow of job %s: %w", id, err)
	}
	if ej.State != escrow.JobSettled {
		return cid.Undef, false, nil
	}
	sum, ok, err := settlement.ReadSummary(ctx, v.Store, id, rel)
	if err != nil || !ok {
		return cid.Undef, false, err
	}
	root, err := cid.Decode(sum.Output)
	return root, err == nil, err
}

// fromSummary fills in a settled job whose verdict this node does not
// hold (it took no part in the job, or its store is past its retention)
// from the job's outcome summary, when one checks against the release.
func (v *JobView) fromSummary(ctx context.Context, id jobs.ID, rel *escrow.Release, j *apiv1.Job) error {
	sum, ok, err := settlement.ReadSummary(ctx, v.Store, id, rel)
	if err != nil || !ok {
		return err
	}
	j.State, j.Verified, j.OutputCID = apiv1.JobSettled, true, sum.Output
	j.Culprits = append(j.Culprits[:0], sum.Culprits...)
	j.VerifierDigest = strings.TrimPrefix(sum.Verdict, "0x")
	return nil
}
