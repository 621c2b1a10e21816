package processor_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/big"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multihash"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/internal/cputime"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/records"
)

// BenchmarkCoordinationFloor: the least that any job of the overhead
// benchmark's shape must put through the mesh, with nothing else
// running: for each MacroJob one room lock and one store batch of its
// MicroJobs' commitments and disclosures, and one room announcement and
// one progress message on the Job channel, each MacroJob's share written
// by one processor at the pace of the job's compute (s.cost per
// MicroJob), the processors in parallel. No queue, no room
// channel, no verifier run apart, no finalizer. CPU is the process's CPU
// from the first write until every member's store holds every record and
// every member has read every message.
//
// Since the mesh cannot use more than the machine's cores, a job that
// must do at least this work can do no better on this machine than:
// floor-overhead-ratio, that CPU ÷ (cores × the ideal wall time of
// BenchmarkCoordinationOverhead), for the overhead ratio; and
// floor-microjobs/s, MicroJobs ÷ (that CPU ÷ cores), for the MicroJobs
// coordinated per second of BenchmarkCoordinationEmptyCompute.
func BenchmarkCoordinationFloor(b *testing.B) {
	for _, sh := range []struct {
		name string
		s    flowShape
	}{
		{"p20-m2002", flowShape{processors: 20, macros: 182, n: 10, cost: 50 * time.Millisecond}},
		{"p4-m33", flowShape{processors: 4, macros: 3, n: 10, cost: 50 * time.Millisecond}},
		{"p10-m407", flowShape{processors: 10, macros: 37, n: 10, cost: 50 * time.Millisecond}},
		{"p10-m110", flowShape{processors: 10, macros: 10, n: 10, cost: 50 * time.Millisecond}},
	} {
		b.Run(sh.name, func(b *testing.B) { benchFloor(b, sh.s) })
	}
}

func benchFloor(b *testing.B, s flowShape) {
	m := benchMesh(b, s, tunings[0], &waitExec{})
	meshtest.WaitConnected(b, m)
	var procs []*localmesh.Member
	for _, mem := range m.Running() {
		if mem.Worker != nil {
			procs = append(procs, mem)
		}
	}
	var cpu time.Duration
	b.ResetTimer()
	for i := range b.N {
		cpu += floorJob(b, m, procs, s, i)
	}
	b.StopTimer()
	mj := float64(s.microjobs())
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N)/mj, "cpu-ms/microjob")
	ideal := time.Duration(s.microjobs()) * s.cost / time.Duration(s.processors)
	cores := float64(runtime.NumCPU())
	b.ReportMetric(cpu.Seconds()/float64(b.N)/(cores*ideal.Seconds()), "floor-overhead-ratio")
	b.ReportMetric(mj*float64(b.N)/(cpu.Seconds()/cores), "floor-microjobs/s")
}

// floorInfo is a JobInfo of shape s, never written to the store: the
// processors do not follow the job, so only the records' replication
// and the messages' delivery cost anything.
func floorInfo(s flowShape, seq int) *jobs.JobInfo {
	info := &jobs.JobInfo{
		Code:           jobs.Source{URI: "ipfs://bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy", SHA256: sha256.Sum256([]byte("code"))},
		Data:           jobs.Data{Source: jobs.Source{URI: "https://example.com/data", SHA256: sha256.Sum256([]byte(fmt.Sprint("data", seq)))}, Size: uint64(8 * s.macros * int(s.n))},
		Slicing:        jobs.Slicing{BlockSize: 8, MicroJobs: s.n, BlocksPerMicro: 1, VerifierBlocks: 1},
		SeedCommitment: jobs.Seed{byte(seq), 1},
		PriceWei:       big.NewInt(1_000_000_000),
		Creator:        jobs.Address{0xc1},
		Deadline:       time.Now().Add(time.Hour).Unix(),
	}
	info.ApplyDefaults()
	return info
}

// floorRecords are the store entries of MacroJob mac written by processor
// self, whose wallet is in the records' form (lowercase hex): the
// commitments and then the disclosures of its MicroJobs.
func floorRecords(plan *jobs.Plan, mac *jobs.MacroJob, self peer.ID, wallet string) ([]crdt.Entry, error) {
	mh, err := multihash.Sum([]byte(fmt.Sprint("result", mac.Index)), multihash.SHA2_256, -1)
	if err != nil {
		return nil, err
	}
	var batch, discl []crdt.Entry
	for _, mu := range mac.Micros {
		d := microjob.Disclosure{
			Version: microjob.RecordVersion, JobID: plan.JobID, MacroIndex: mac.Index, MicroID: mu.ID,
			Processor: self.String(), Wallet: wallet, BlockIndices: mu.Blocks,
			ResultCID: cid.NewCidV1(cid.Raw, mh), Salt: sha256.Sum256([]byte(mu.ID.String())),
		}
		for _, blk := range mu.Blocks {
			d.BlockHashes = append(d.BlockHashes, sha256.Sum256(fmt.Append(nil, blk)))
		}
		c, err := d.Commitment()
		if err != nil {
			return nil, err
		}
		batch = append(batch, crdt.Entry{Key: records.CommitmentKey(c), Type: records.CommitType, Payload: c.Encode()})
		discl = append(discl, crdt.Entry{Key: records.DisclosureKey(d), Type: records.ResultType, Payload: d.Encode()})
	}
	return append(batch, discl...), nil
}

// floorJob puts one job's least traffic through the mesh and returns the
// CPU it took.
func floorJob(b *testing.B, m *localmesh.Mesh, procs []*localmesh.Member, s flowShape, seq int) time.Duration {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	plan, err := jobs.Slice(floorInfo(s, seq))
	if err != nil {
		b.Fatal(err)
	}
	if got := plan.NumMicroJobs(); got != s.microjobs() {
		b.Fatalf("plan has %d MicroJobs, the shape says %d", got, s.microjobs())
	}
	members := m.Running()
	w := newFloorWatch(ctx, len(members))
	defer w.close()
	w.watch(b, members, plan.JobID)
	w.waitJoined(b, len(members))
	perMember := int64(len(plan.Macros) + 2*s.microjobs()) // per member
	messages := int64(len(members)) * int64(2*len(plan.Macros))
	// Each processor writes a MacroJob's share when it would have run its
	// MicroJobs at s.cost each: the job's pace, not a burst.
	per := time.Duration(s.n+1) * s.cost
	cpu0 := cputime.Process()
	start := time.Now()
	errs := make(chan error, len(procs))
	for k, p := range procs {
		go func() {
			errs <- func() error {
				for turn, mi := 1, k; mi < len(plan.Macros); turn, mi = turn+1, mi+len(procs) {
					pace := time.NewTimer(time.Until(start.Add(time.Duration(turn) * per)))
					select {
					case <-pace.C:
					case <-ctx.Done():
						pace.Stop()
						return ctx.Err()
					}
					if err := writeFloorShare(ctx, plan, &plan.Macros[mi], p, w.topics[p]); err != nil {
						return err
					}
				}
				return nil
			}()
		}()
	}
	for range procs {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	w.waitDelivered(b, ctx, members, plan.JobID, messages, perMember)
	return cputime.Process() - cpu0
}

// writeFloorShare is what processor p puts through the mesh for MacroJob
// mac: its room lock, the room's announcement, one batch of the MicroJobs'
// commitments and disclosures, and their progress message.
func writeFloorShare(ctx context.Context, plan *jobs.Plan, mac *jobs.MacroJob, p *localmesh.Member, topic *p2p.Topic[jobs.ChannelMsg]) error {
	batch, err := floorRecords(plan, mac, p.Host.ID(), strings.ToLower(p.Wallet.Hex()))
	if err != nil {
		return err
	}
	lock := records.RoomLock{Owner: p.Host.ID().String(), Expires: time.Now().Add(time.Minute).UTC()}
	if err := crdt.PutJSON(ctx, p.Store, records.RoomLockKey(plan.JobID.String(), mac.Index), records.RoomLockType, lock); err != nil {
		return err
	}
	if err := topic.Publish(ctx, jobs.ChannelMsg{Kind: jobs.KindRoom, JobID: plan.JobID.String(), Macro: mac.Index, Processor: p.Host.ID().String(), Open: len(mac.Micros)}); err != nil {
		return err
	}
	if err := p.Store.PutBatch(ctx, batch); err != nil {
		return err
	}
	var micros []string
	for _, mu := range mac.Micros {
		micros = append(micros, mu.ID.String())
	}
	return topic.Publish(ctx, jobs.Progress(plan.JobID.String(), p.Host.ID().String(), micros))
}

// floorWatch is every member reading the Job channel and watching the
// job's records, counting what arrives.
type floorWatch struct {
	ctx        context.Context
	stop       context.CancelFunc
	wg         sync.WaitGroup
	topics     map[*localmesh.Member]*p2p.Topic[jobs.ChannelMsg]
	read       atomic.Int64
	stored     []atomic.Int64
	overflowed []atomic.Bool
}

func newFloorWatch(ctx context.Context, members int) *floorWatch {
	w := &floorWatch{
		topics:     map[*localmesh.Member]*p2p.Topic[jobs.ChannelMsg]{},
		stored:     make([]atomic.Int64, members),
		overflowed: make([]atomic.Bool, members),
	}
	w.ctx, w.stop = context.WithCancel(ctx)
	return w
}

// close stops the readers and watchers and leaves the Job channel.
func (w *floorWatch) close() {
	w.stop()
	w.wg.Wait()
	for _, t := range w.topics {
		_ = t.Close()
	}
}

// watch joins every member to the job's channel and starts counting the
// messages it reads and the records its store takes.
func (w *floorWatch) watch(b *testing.B, members []*localmesh.Member, id jobs.ID) {
	b.Helper()
	for i, mem := range members {
		t, err := jobs.JoinJobTopic(mem.Host, id)
		if err != nil {
			b.Fatal(err)
		}
		w.topics[mem] = t
		changes := mem.Store.Watch(w.ctx, records.JobKey(id)+"/")
		w.wg.Add(2)
		go func() {
			defer w.wg.Done()
			for {
				if _, err := t.Next(w.ctx); err != nil {
					return
				}
				w.read.Add(1)
			}
		}()
		go func() {
			defer w.wg.Done()
			for ch := range changes {
				switch ch.Kind {
				case crdt.ChangePut:
					w.stored[i].Add(1)
				case crdt.ChangeOverflow:
					w.overflowed[i].Store(true) // counted by a query at the end
				}
			}
		}()
	}
}

// waitJoined waits until every member has every other on the Job channel.
func (w *floorWatch) waitJoined(b *testing.B, members int) {
	b.Helper()
	wait.Until(b, time.Minute, func() error {
		for mem, t := range w.topics {
			if n := len(t.Peers()); n < members-1 {
				return fmt.Errorf("member %d has %d of %d peers on the Job channel", mem.Index, n, members-1)
			}
		}
		return nil
	})
}

// waitDelivered waits until the members have read messages messages in
// all and each member's store holds perMember of job id's records.
func (w *floorWatch) waitDelivered(b *testing.B, ctx context.Context, members []*localmesh.Member, id jobs.ID, messages, perMember int64) {
	b.Helper()
	wait.Until(b, 4*time.Minute, func() error {
		if r := w.read.Load(); r < messages {
			return fmt.Errorf("%d of %d messages read", r, messages)
		}
		for i, mem := range members {
			n := w.stored[i].Load()
			if w.overflowed[i].Load() {
				recs, err := mem.Store.Query(ctx, records.JobKey(id))
				if err != nil {
					return err
				}
				n = int64(len(recs))
			}
			if n < perMember {
				return fmt.Errorf("member %d stored %d of %d records", mem.Index, n, perMember)
			}
		}
		return nil
	})
}
