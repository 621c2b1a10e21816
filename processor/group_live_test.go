package processor_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshview"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// groupRoles: four "big" processors and two "small" ones.
// groupRole is one processor's hardware in a group-job test mesh.
type groupRole struct {
	card string
	vram uint64
}

var groupRoles = []groupRole{{"big", 24576}, {"big", 24576}, {"big", 24576}, {"big", 24576}, {"small", 8192}, {"small", 8192}}

// groupMesh starts a mesh of one processor per role, with the group tests'
// timings: a fast dispatch view, short disclosure and duplicate graces
// (every replica is judged, a slow one too) and 10 ms blocks (the jobs'
// code is a stand-in module). more adjusts each processor after that.
func groupMesh(t *testing.T, roles []groupRole, more func(mem *localmesh.Member, pc *processor.Config)) *localmesh.Mesh {
	t.Helper()
	return flowMeshWith(t, localmesh.Options{
		Processors: len(roles),
		Configure: func(mem *localmesh.Member, cfg *node.Config) {
			if mem.Index >= 1 && mem.Index <= len(roles) {
				r := roles[mem.Index-1]
				cfg.Processor.CardModel, cfg.Processor.VRAMMiB = r.card, r.vram
			}
		},
	}, func(mem *localmesh.Member, pc *processor.Config) {
		pc.FactsEvery = 300 * time.Millisecond
		pc.DiscloseGrace = 3 * time.Second
		pc.DuplicateGrace = 3 * time.Second
		pc.RerunTimeout = time.Minute // nobody is silent, unless more says so
		pc.Exec = &waitExec{cost: 10 * time.Millisecond}
		more(mem, pc)
	})
}

// TestGroupJobLiveMesh runs a job asking for R=3 replicas on a mesh of
// four big and two small processors: only big has three, so the group is
// three of the four big ones; the job completes with every MicroJob run by
// the three members, and nobody else commits anything.
func TestGroupJobLiveMesh(t *testing.T) {
	m := groupMesh(t, groupRoles, func(*localmesh.Member, *processor.Config) {})
	procs := processorsOf(m)
	card := map[string]string{}
	for i, p := range procs {
		card[p.Host.ID().String()] = groupRoles[i].card
	}
	// Every processor sees every other live before the job appears, so
	// the first to take it chooses among all of them.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, p := range procs {
		if err := waitFor(ctx, func() bool { return p.Worker.View().Live() == len(groupRoles) }); err != nil {
			t.Fatalf("processor %d sees %d live processors", p.Index, p.Worker.View().Live())
		}
	}

	const r = 3
	info, res := runJob(t, m, dispatchSpec(7, 2, 4, jobs.Requirements{Replicas: r}), 90*time.Second)
	checkComplete(t, info, res)
	if len(res.Culprits) != 0 {
		t.Fatalf("culprits in an honest mesh: %v", res.Culprits)
	}

	// The group: one winning record, three big members.
	recs, err := client(m).Store.Query(context.Background(), records.GroupPrefix(info.ID()))
	if err != nil {
		t.Fatal(err)
	}
	g, ok := meshview.PickGroup(info, nil, recs, nil)
	if !ok {
		t.Fatalf("no valid group record among %d", len(recs))
	}
	if g.CardModel != "big" || len(g.Members) != r {
		t.Fatalf("group %+v: want %d big members", g, r)
	}
	for _, p := range g.Members {
		if card[p] != "big" {
			t.Fatalf("group member %s has card %q", p, card[p])
		}
	}

	// Every MicroJob has R credited results from distinct members.
	v := res.Verdict
	if v.Replicas != r || len(v.Short) != 0 {
		t.Fatalf("verdict replicas %d, short %v", v.Replicas, v.Short)
	}
	plan, err := jobs.SliceChecked(info, info.SeedCommitment)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]map[string]bool{}
	for _, x := range v.Results {
		if by[x.MicroID] == nil {
			by[x.MicroID] = map[string]bool{}
		}
		if by[x.MicroID][x.Processor] {
			t.Fatalf("MicroJob %s credited twice to %s", x.MicroID, x.Processor)
		}
		by[x.MicroID][x.Processor] = true
		if !g.Has(x.Processor) {
			t.Fatalf("MicroJob %s has a result of non-member %s", x.MicroID, x.Processor)
		}
	}
	for _, mac := range plan.Macros {
		for _, mu := range mac.Micros {
			if n := len(by[mu.ID.String()]); n != r {
				t.Fatalf("MicroJob %s has %d results, want %d", mu.ID, n, r)
			}
		}
	}
	for _, p := range g.Members {
		if v.Counts[p] != plan.NumMicroJobs() {
			t.Fatalf("member %s credited %d MicroJobs, want %d", p, v.Counts[p], plan.NumMicroJobs())
		}
	}

	// Nobody outside the group committed anything.
	for who, n := range commitsBy(t, m, info.ID()) {
		if !g.Has(who) {
			t.Fatalf("non-member %s (%s) committed %d MicroJobs", who, card[who], n)
		}
	}
}

// TestGroupSilentMemberReplaced: the first member (by peer ID) of the
// first group never runs anything; after RerunTimeout another member
// replaces it by the fourth big processor, and the job completes with
// every MicroJob run by the three members of the new round.
func TestGroupSilentMemberReplaced(t *testing.T) {
	var silentID atomic.Value
	m := groupMesh(t, groupRoles[:5], func(mem *localmesh.Member, pc *processor.Config) {
		// Long enough for a busy machine's honest members to commit
		// their first MicroJob.
		pc.RerunTimeout = 8 * time.Second
		pc.Hold = func(ctx context.Context, _, _ jobs.ID) {
			if g, ok := firstGroup(ctx, mem); ok && g.Members[0] == mem.Host.ID().String() {
				silentID.Store(mem.Host.ID().String())
				<-ctx.Done() // silent until the worker stops
			}
		}
	})
	procs := processorsOf(m)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, p := range procs {
		if err := waitFor(ctx, func() bool { return p.Worker.View().Live() == 5 }); err != nil {
			t.Fatalf("processor %d sees %d live processors", p.Index, p.Worker.View().Live())
		}
	}
	info, res := runJob(t, m, dispatchSpec(8, 2, 4, jobs.Requirements{Replicas: 3}), 2*time.Minute)
	checkComplete(t, info, res)
	silent, _ := silentID.Load().(string)
	if silent == "" {
		t.Fatal("the first member never reached a MicroJob")
	}
	recs, err := client(m).Store.Query(context.Background(), records.GroupPrefix(info.ID()))
	if err != nil {
		t.Fatal(err)
	}
	g, ok := meshview.PickGroup(info, nil, recs, nil)
	if !ok || g.Round != 1 || !slices.Equal(g.Dropped, []string{silent}) || g.Has(silent) || g.CardModel != "big" {
		t.Fatalf("final group %+v, want round 1 dropping %s", g, silent)
	}
	commits := commitsBy(t, m, info.ID())
	if commits[silent] != 0 {
		t.Fatalf("the silent member committed %d MicroJobs", commits[silent])
	}
	plan, err := jobs.SliceChecked(info, info.SeedCommitment)
	if err != nil {
		t.Fatal(err)
	}
	for who := range commits {
		if !g.Has(who) {
			t.Fatalf("non-member %s committed", who)
		}
	}
	for _, p := range g.Members {
		if res.Verdict.Counts[p] != plan.NumMicroJobs() {
			t.Fatalf("member %s credited %d of %d MicroJobs", p, res.Verdict.Counts[p], plan.NumMicroJobs())
		}
	}
}

// firstGroup is the round-0 group record with the lowest payload hash in
// mem's store, whichever job it is for (the tests run one job).
func firstGroup(ctx context.Context, mem *localmesh.Member) (records.Group, bool) {
	recs, err := mem.Store.Query(ctx, "/jobs")
	if err != nil {
		return records.Group{}, false
	}
	var first []crdt.Record
	for _, r := range recs {
		var g records.Group
		if r.Type == records.GroupType && json.Unmarshal(r.Payload, &g) == nil && g.Round == 0 {
			first = append(first, r)
		}
	}
	for _, r := range recs {
		if r.Type != records.JobType {
			continue
		}
		if info, err := jobs.Decode(r.Payload); err == nil {
			return meshview.PickGroup(info, nil, first, nil)
		}
	}
	return records.Group{}, false
}

// TestGroupLiarOutvoted: of three big processors (the only card model
// with three), one returns wrong output for every block. The majority of
// each MicroJob's three results names it culprit without a third run,
// and the job completes with the two honest members' results.
func TestGroupLiarOutvoted(t *testing.T) {
	const liarIndex = 2
	roles := []groupRole{{"big", 24576}, {"big", 24576}, {"big", 24576}, {"small", 8192}}
	m := groupMesh(t, roles, func(mem *localmesh.Member, pc *processor.Config) {
		if mem.Index == liarIndex {
			pc.Tamper = func(_ uint64, _ bool, out []byte) []byte { return append(out, 0xff) }
		}
	})
	procs := processorsOf(m)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, p := range procs {
		if err := waitFor(ctx, func() bool { return p.Worker.View().Live() == len(roles) }); err != nil {
			t.Fatalf("processor %d sees %d live processors", p.Index, p.Worker.View().Live())
		}
	}
	liar := m.Members[liarIndex].Host.ID().String()
	info, res := runJob(t, m, dispatchSpec(9, 2, 4, jobs.Requirements{Replicas: 3}), 2*time.Minute)
	checkComplete(t, info, res)
	v := res.Verdict
	// The final verdict judges without the culprit's disclosures; its
	// commitments still count toward R.
	if !slices.Equal(res.Culprits, []string{liar}) {
		t.Fatalf("culprits %v, want the liar %s", res.Culprits, liar)
	}
	for micro, n := range v.Committed {
		if n != 3 {
			t.Fatalf("MicroJob %s has %d committers, want 3", micro, n)
		}
	}
	if len(v.Resolutions) != 0 {
		t.Fatalf("the majority should decide without third runs: %+v", v.Resolutions)
	}
	if _, ok := v.Counts[liar]; ok {
		t.Fatalf("the liar is credited: %v", v.Counts)
	}
	plan, err := jobs.SliceChecked(info, info.SeedCommitment)
	if err != nil {
		t.Fatal(err)
	}
	for p, n := range v.Counts {
		if n != plan.NumMicroJobs() {
			t.Fatalf("honest member %s credited %d of %d MicroJobs", p, n, plan.NumMicroJobs())
		}
	}
	if len(v.Counts) != 2 {
		t.Fatalf("credited %v, want the two honest members", v.Counts)
	}
}
