package processor_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// lowestRanked is the processor of m ranked last among job id's
// finalizers: never the designated one while another has a result.
func lowestRanked(m *localmesh.Mesh, id jobs.ID) *localmesh.Member {
	var low *localmesh.Member
	var lowRank [32]byte
	for _, mem := range processorsOf(m) {
		r := records.FinalizerRank(id, mem.Host.ID().String())
		if low == nil || bytes.Compare(r[:], lowRank[:]) < 0 {
			low, lowRank = mem, r
		}
	}
	return low
}

// TestForgedVerdictIsNotSigned: one of four staked processors, which did
// its share of the work honestly, writes a verdict with the true verdict,
// culprits and rounds but another output, before any finalizer writes one
// (an honest one holds its own until every other honest processor has
// refused the forgery); it never writes a true one. Every honest
// processor refuses to sign for it (counted), the designated finalizer
// writes its own verdict, and the job settles on chain on that verdict's
// output, with the payees the verdict credits and no stake slashed. The
// DApp reports the output the settlement names.
func TestForgedVerdictIsNotSigned(t *testing.T) {
	var m *localmesh.Mesh
	var forgedKey atomic.Pointer[string]
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	m = chainMesh(t, 4, func(mem *localmesh.Member, pc *processor.Config) {
		pc.BeforeVerdict = func(id jobs.ID) bool {
			attacker := lowestRanked(m, id)
			if attacker == mem {
				return false // the attacker withholds its true verdict
			}
			k := forgedKey.Load()
			if k == nil {
				return false
			}
			if _, err := mem.Store.Get(ctx, *k); err != nil {
				return false
			}
			for _, p := range processorsOf(m) {
				if p == attacker || p == mem {
					continue
				}
				if n, err := gatheredSum(p.Metrics, "jobmesh_processor_sign_refusals_total", "reason", "output"); err != nil || n < 1 {
					return false
				}
			}
			return true
		}
	})
	waitBound(t, m)
	procs := processorsOf(m)
	stakes := stakesOf(t, ctx, m, procs)
	c := client(m)
	job := newMandelbrot(t, 192, 160, 32)
	info, err := c.DApp.Submit(ctx, job.spec(3, 4))
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID()
	attacker := lowestRanked(m, id)
	self := attacker.Host.ID().String()
	forged := forgeVerdict(t, ctx, attacker, info)
	key := records.VerdictKey(id, self)
	if err := crdt.PutJSON(ctx, attacker.Store, key, records.VerdictType, forged); err != nil {
		t.Fatal(err)
	}
	forgedKey.Store(&key)

	res, err := c.DApp.Wait(ctx, id, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	checkComplete(t, info, res)
	checkRelease(t, m, info, res)
	if res.Output.String() == forged.Output || records.ResultRoot(res.Output) != res.Release.ResultRoot {
		t.Fatalf("reported output %s, settled root %s; the forgery's output is %s", res.Output, res.Release.ResultRoot, forged.Output)
	}
	chosen, err := finish.ReadVerdict(ctx, c.Store, c.IPFS, id, &res.Release.ResultRoot)
	if err != nil || chosen.Author == self {
		t.Fatalf("the verdict settled on is %q's (%v); the attacker is %s", chosen.Author, err, self)
	}
	honest := slices.DeleteFunc(slices.Clone(procs), func(p *localmesh.Member) bool { return p == attacker })
	checkRefusedUnslashed(t, ctx, m, honest, stakes)
	checkNoneSigned(t, ctx, c, honest, id, forged.Output)
	if burned, err := m.Escrow.TotalBurned(ctx); err != nil || burned.Sign() != 0 {
		t.Fatalf("burned %v (%v)", burned, err)
	}
	if len(res.Culprits) != 0 {
		t.Fatalf("culprits %v in an honest job", res.Culprits)
	}
}

// stakesOf is each processor's active stake, as a string.
func stakesOf(t *testing.T, ctx context.Context, m *localmesh.Mesh, procs []*localmesh.Member) map[*localmesh.Member]string {
	t.Helper()
	stakes := map[*localmesh.Member]string{}
	for _, p := range procs {
		s, err := m.Escrow.StakeOf(ctx, p.Wallet)
		if err != nil {
			t.Fatal(err)
		}
		stakes[p] = s.Active.String()
	}
	return stakes
}

// forgeVerdict waits until the attacker's replica holds a final judgement
// of the job and returns the verdict it would write, with another output.
func forgeVerdict(t *testing.T, ctx context.Context, attacker *localmesh.Member, info *jobs.JobInfo) records.VerdictRecord {
	t.Helper()
	var forged records.VerdictRecord
	if err := waitFor(ctx, func() bool {
		rec, final, err := processor.VerdictFromRecords(ctx, attacker.Store, info)
		forged = rec
		return err == nil && final
	}); err != nil {
		t.Fatal("the attacker's replica never judged the job final")
	}
	forged.Output = "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"
	return forged
}

// checkRefusedUnslashed checks that every honest processor counted a
// refusal to sign for the forged output and kept its stake.
func checkRefusedUnslashed(t *testing.T, ctx context.Context, m *localmesh.Mesh, honest []*localmesh.Member, stakes map[*localmesh.Member]string) {
	t.Helper()
	for _, p := range honest {
		if n := counterSum(t, p.Metrics, "jobmesh_processor_sign_refusals_total", "reason", "output"); n < 1 {
			t.Errorf("processor %d did not refuse to sign for the forged output", p.Index)
		}
		s, err := m.Escrow.StakeOf(ctx, p.Wallet)
		if err != nil {
			t.Fatal(err)
		}
		if s.Active.String() != stakes[p] {
			t.Errorf("processor %d's stake went from %s to %s", p.Index, stakes[p], s.Active)
		}
	}
}

// checkNoneSigned checks that no honest processor ever signed a
// settlement of the forged output.
func checkNoneSigned(t *testing.T, ctx context.Context, c *localmesh.Member, honest []*localmesh.Member, id jobs.ID, output string) {
	t.Helper()
	forgedOut, err := cid.Decode(output)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range honest {
		r, err := c.Store.Get(ctx, records.SignatureKey(id, p.Host.ID().String()))
		if errors.Is(err, crdt.ErrNotFound) {
			continue // settled before it signed
		}
		if err != nil {
			t.Fatalf("processor %d's signature: %v", p.Index, err)
		}
		s, err := records.DecodeSignatureRecord(r.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if s.Settlement.ResultRoot == records.ResultRoot(forgedOut) {
			t.Fatalf("processor %d signed a settlement of the forged output", p.Index)
		}
	}
}
