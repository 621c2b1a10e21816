package meshview

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/test"
	"github.com/multiformats/go-multihash"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// chainOf is a chain of fixed releases, by escrow key, and block times.
type chainOf struct {
	rels  map[common.Hash]*escrow.Release
	times map[uint64]time.Time
	reads map[common.Hash]int
}

func (c *chainOf) Released(_ context.Context, key common.Hash) (*escrow.Release, escrow.Job, error) {
	c.reads[key]++
	return c.rels[key], escrow.Job{}, nil
}

func (c *chainOf) BlockTime(_ context.Context, block uint64) (time.Time, error) {
	return c.times[block], nil
}

// settledFixture builds mesh-store records of settled jobs: JobInfo and
// outcome summaries, and nothing of the jobs' own records, as a node
// that took no part in them holds.
type settledFixture struct {
	t     *testing.T
	recs  crdttest.Records
	chain *chainOf
}

// job adds job seed, whose MacroJob 0 committer committed and disclosed
// and lockers took and never committed, and returns its ID and escrow
// key. At block > 0 the chain released it on that summary, at time at;
// writer writes the summary.
func (s *settledFixture) job(seed byte, committer peer.ID, lockers []peer.ID, block uint64, at time.Time, writer peer.ID) (jobs.ID, common.Hash, records.SummaryRecord) {
	s.t.Helper()
	info, _, r := queueJob(s.t, seed, 1000, "")
	s.recs = append(s.recs, r)
	id := info.ID()
	mh, err := multihash.Sum([]byte{seed}, multihash.SHA2_256, -1)
	if err != nil {
		s.t.Fatal(err)
	}
	out := cid.NewCidV1(cid.Raw, mh)
	v := microjob.Verdict{Version: microjob.VerdictVersion, JobID: id.String(), Complete: true, Verified: true,
		VerifierHashes: map[uint64][]string{0: {common.Hash{seed}.Hex()[2:]}}, Counts: map[string]int{}, ResultCIDs: map[string]string{}}
	round := records.RoundOrder{Macro: 0, Commits: []string{committer.String()}, Disclosures: []string{committer.String()}}
	for _, l := range lockers {
		round.Lockers = append(round.Lockers, l.String())
	}
	slices.Sort(round.Lockers)
	rec := records.VerdictRecord{Verdict: v.Encode(), Culprits: []string{}, Output: out.String(), Rounds: []records.RoundOrder{round}}
	tx := common.Hash{seed, 0xee}
	sum, err := records.NewSummary(records.SummarySettled, rec, v, tx, max(block, 1))
	if err != nil {
		s.t.Fatal(err)
	}
	s.put(id, writer, sum)
	key := escrow.JobKey(common.Address(info.Creator), common.Hash(id))
	if block > 0 {
		s.chain.rels[key] = &escrow.Release{Key: key, ResultRoot: records.ResultRoot(out), VerifierHash: sum.Digest(), TxHash: tx, Block: block}
		s.chain.times[block] = at
	}
	return id, key, sum
}

// put writes summary sum of job id as writer's.
func (s *settledFixture) put(id jobs.ID, writer peer.ID, sum records.SummaryRecord) {
	s.t.Helper()
	b, err := records.EncodeSummaryRecord(sum)
	if err != nil {
		s.t.Fatal(err)
	}
	s.recs = append(s.recs, crdt.Record{Key: records.SummaryKey(id, writer.String()), Type: records.SummaryType, Author: writer, Payload: b})
}

// TestSettledJobsReplay: with a chain, the QoS ledger of a node that
// holds none of the jobs' records replays the settled jobs from their
// summaries, in the order of their release blocks' times: a locker that
// never committed times out in each and is kicked by the last. A well
// formed summary that frames another processor as a locker (not what the
// chain released) is skipped, and a job not released yet is read again only
// after summaryRetry.
func TestSettledJobsReplay(t *testing.T) {
	a, dead, honest, writer := test.RandPeerIDFatal(t), test.RandPeerIDFatal(t), test.RandPeerIDFatal(t), test.RandPeerIDFatal(t)
	fx := &settledFixture{t: t, chain: &chainOf{rels: map[common.Hash]*escrow.Release{}, times: map[uint64]time.Time{}, reads: map[common.Hash]int{}}}
	t0 := time.Unix(1_700_000_000, 0)
	cfg := DefaultFactsConfig()
	k := cfg.Dispatch.KickTimeouts
	var want []jobs.ID
	for i := range k {
		// Blocks in reverse order of the seeds: the replay follows the
		// chain, not the store's key order.
		block := uint64(10 + k - i)
		id, _, sum := fx.job(byte(1+i), a, []peer.ID{dead}, block, t0.Add(time.Duration(block)*time.Second), writer)
		want = append([]jobs.ID{id}, want...)
		if i == 0 {
			// Another writer's summary that also names honest as a
			// locker: well formed, but not what the chain released.
			forged := sum
			forged.Members = slices.Sorted(slices.Values(append(slices.Clone(sum.Members), honest.String())))
			forged.Rounds = nil
			index := func(p peer.ID) int { return slices.Index(forged.Members, p.String()) }
			forged.Rounds = []records.SummaryRound{{Macro: 0, Commits: []int{index(a)}, Disclosures: []int{index(a)},
				Lockers: []int{index(dead), index(honest)}}}
			b, err := records.EncodeSummaryRecord(forged)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := records.DecodeSummaryRecord(b); err != nil {
				t.Fatalf("the forged summary is not well formed: %v", err)
			}
			fx.put(id, test.RandPeerIDFatal(t), forged)
			// Ahead of the genuine one, so that it is read first.
			n := len(fx.recs)
			fx.recs[n-2], fx.recs[n-1] = fx.recs[n-1], fx.recs[n-2]
		}
	}
	unsettled, unsettledKey, _ := fx.job(byte(1+k), a, []peer.ID{dead}, 0, time.Time{}, writer)
	now := t0.Add(time.Hour)
	dir := staticDirectory{{PeerID: a.String(), Updated: now}, {PeerID: dead.String(), Updated: now}, {PeerID: honest.String(), Updated: now}}
	f, err := NewFacts(FactsParams{Store: fx.recs, Directory: dir, Settlements: fx.chain, Now: func() time.Time { return now }}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := SummarizedJobs(context.Background(), fx.recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != k+1 {
		t.Fatalf("%d jobs with a summary, want %d", len(ids), k+1)
	}
	done, err := f.settledJobs(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	var got []jobs.ID
	for _, j := range done {
		got = append(got, j.id)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("replayed %v, want %v by block time", got, want)
	}
	v, err := f.View(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	if v.Tasks != k {
		t.Fatalf("%d tasks replayed, want %d", v.Tasks, k)
	}
	if !v.Settled(want[0]) || v.Settled(unsettled) {
		t.Fatalf("settled: a released job %v, an unreleased one %v", v.Settled(want[0]), v.Settled(unsettled))
	}
	kick, ok := v.KickOf(dead.String())
	if !ok || kick.TaskID != want[k-1].String()+"/macro/0" {
		t.Fatalf("the locker's kick %+v (%v), want by the last job's task", kick, ok)
	}
	for _, p := range []peer.ID{a, honest} {
		if pv, ok := v.Processor(p.String()); !ok || pv.Timeouts != 0 || pv.Kick != nil {
			t.Fatalf("%s has %d timeouts, kick %+v: a forged summary counted", p, pv.Timeouts, pv.Kick)
		}
	}
	if n := fx.chain.reads[unsettledKey]; n != 1 {
		t.Fatalf("the unreleased job was read %d times within the retry", n)
	}
	now = now.Add(summaryRetry)
	if _, err := f.View(context.Background(), ids); err != nil {
		t.Fatal(err)
	}
	if n := fx.chain.reads[unsettledKey]; n != 2 {
		t.Fatalf("the unreleased job was read %d times after the retry", n)
	}
}
