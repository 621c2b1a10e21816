package meshtest

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/test"
	"github.com/multiformats/go-multihash"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/internal/jobtest"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/records"
)

// BenchmarkLateJoin measures what a node pays to join a mesh with a long
// history when jobs keep their own stores: a mesh of 1 bootstrap node and
// 4 processors, job stores on, whose mesh store holds what S settled jobs
// of 100 MicroJobs leave there (each job's JobInfo, its settled record and
// its outcome summary: 10 MacroJobs, 20 processors in the rounds), written
// by one processor through its store as the creator and the settler write
// them (two updates a job: the announcement, then the settled record and
// the summary together). A fresh processor then joins. Reported:
// ready-s, from its start until its mesh store holds every advertisement
// and every record of the history (what it needs to choose work and to
// answer for the settled jobs); fetched-B, the DAG bytes it received over
// bitswap and by backfill; and fetched-B/job. The jobs=0 case, in the same run, is the
// baseline: what joining costs without any history.
//
// Run with -benchtime=1x (each sub-benchmark builds its mesh once).
func BenchmarkLateJoin(b *testing.B) {
	for _, n := range []int{0, 200} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			for b.Loop() {
				benchLateJoin(b, n)
			}
		})
	}
}

func benchLateJoin(b *testing.B, settledJobs int) {
	m := New(b, localmesh.Options{Processors: 4, Configure: func(_ *localmesh.Member, cfg *node.Config) {
		cfg.Store.JobStores = node.JobStoresOn
	}})
	ctx := context.Background()
	WaitConnected(b, m)
	writer := m.Members[1]
	self := writer.Host.ID().String()
	members := make([]string, 20)
	for i := range members {
		members[i] = test.RandPeerIDFatal(b).String()
	}
	for i := range settledJobs {
		info := *jobtest.Info(byte(i))
		info.Deadline = time.Now().Add(-time.Hour).Unix() - int64(i) // over: nobody works it
		info.Requirements.GPUModel = "none"
		info.PriceWei = big.NewInt(1_000_000_000)
		id := info.ID()
		sum := historySummary(b, id, members, uint64(100+i))
		settled := fmt.Sprintf(`{"version":%d,"tx":"%s","block":%d,"submitter":"%s"}`,
			records.SettledRecordVersion, strings.ToLower(common.Hash{byte(i), 1}.Hex()), 100+i, self)
		// The creator's announcement, then the settler's one update.
		if err := writer.Store.Put(ctx, records.JobKey(id), records.JobType, info.Encode()); err != nil {
			b.Fatal(err)
		}
		if err := writer.Store.PutBatch(ctx, []crdt.Entry{
			{Key: records.SettledKey(id), Type: records.SettledType, Payload: []byte(settled)},
			{Key: records.SummaryKey(id, self), Type: records.SummaryType, Payload: sum},
		}); err != nil {
			b.Fatal(err)
		}
	}
	want := func(s crdt.Reader) (int, error) {
		recs, err := s.Query(ctx, records.JobsPrefix)
		if err != nil {
			return 0, err
		}
		ads, err := s.Query(ctx, records.NodesPrefix)
		return len(recs) + len(ads), err
	}
	// Every node of the mesh holds the history before the newcomer comes.
	var total int
	wait.Until(b, 5*time.Minute, func() error {
		n, err := want(writer.Store)
		if err != nil {
			return err
		}
		for _, mem := range m.Running() {
			got, err := want(mem.Store)
			if err != nil {
				return err
			}
			if got != n || got < 3*settledJobs {
				return fmt.Errorf("member %d holds %d records, member 1 %d", mem.Index, got, n)
			}
		}
		total = n
		return nil
	})

	start := time.Now()
	late, err := m.Add(ctx, node.RoleProcessor)
	if err != nil {
		b.Fatal(err)
	}
	wait.Until(b, 5*time.Minute, func() error {
		got, err := want(late.Store)
		if err != nil {
			return err
		}
		// Its own advertisement and wallet binding come on top.
		if got < total {
			return fmt.Errorf("the newcomer holds %d of %d records", got, total)
		}
		return nil
	})
	ready := time.Since(start)
	fetched := crdttest.Metric(b, late.Node.Metrics, "jobmesh_ipfs_bitswap_bytes_received_total", nil) +
		crdttest.Metric(b, late.Node.Metrics, "jobmesh_crdt_backfill_bytes_total", map[string]string{"direction": "received"})
	b.ReportMetric(ready.Seconds(), "ready-s")
	b.ReportMetric(fetched, "fetched-B")
	if settledJobs > 0 {
		b.ReportMetric(fetched/float64(settledJobs), "fetched-B/job")
	}
	for _, id := range late.JobStores().Held() {
		b.Fatalf("the newcomer joined the store of job %s", id)
	}
}

// historySummary is a settled job's outcome summary as a job of 100
// MicroJobs leaves it: 10 MacroJobs, each committed by 5 of members in
// turn and disclosed by them.
func historySummary(b *testing.B, id jobs.ID, members []string, block uint64) []byte {
	b.Helper()
	mh, err := multihash.Sum(id[:], multihash.SHA2_256, -1)
	if err != nil {
		b.Fatal(err)
	}
	v := microjob.Verdict{Version: microjob.VerdictVersion, JobID: id.String(), Complete: true, Verified: true,
		VerifierHashes: map[uint64][]string{}, Counts: map[string]int{}, ResultCIDs: map[string]string{}}
	var rounds []records.RoundOrder
	for m := range 10 {
		v.VerifierHashes[uint64(m)] = []string{common.Hash{byte(m)}.Hex()[2:]}
		var ps []string
		for k := range 5 {
			ps = append(ps, members[(m*5+k)%len(members)])
		}
		rounds = append(rounds, records.RoundOrder{Macro: uint64(m), Commits: ps, Disclosures: ps})
	}
	rec := records.VerdictRecord{Verdict: v.Encode(), Culprits: []string{}, Output: cid.NewCidV1(cid.Raw, mh).String(), Rounds: rounds}
	sum, err := records.NewSummary(records.SummarySettled, rec, v, common.Hash{1}, block)
	if err != nil {
		b.Fatal(err)
	}
	out, err := records.EncodeSummaryRecord(sum)
	if err != nil {
		b.Fatal(err)
	}
	return out
}
