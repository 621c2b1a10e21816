package chaos

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/records"
)

// JobReport is what one job suffered and how it ended.
type JobReport struct {
	Index  int
	ID     jobs.ID
	Faults Faults
	// Killed: the kill came before the job was over.
	Killed bool
	// Settled: the escrow was released within the job timeout.
	Settled bool
	// Elapsed is the time from submission to release (or to the
	// timeout).
	Elapsed time.Duration
	// LastBlock is the time from the last new commitment the client saw
	// to the verdict: what finishing a job costs once its blocks are
	// processed.
	LastBlock time.Duration
	// Culprits are the member indices the verdict named.
	Culprits []int
	// LiesAccepted counts the blocks whose accepted result is a lie
	// (run.liesAccepted).
	LiesAccepted int
	// Violations are the invariants the job broke, one line each.
	Violations []string
}

// runJob submits job j under faults f, waits for its release, heals the
// mesh, and checks the job's invariants.
func (r *run) runJob(ctx context.Context, j int, f Faults) (JobReport, error) {
	jr := JobReport{Index: j, Faults: f}
	for _, i := range f.Liars {
		kind := int32(1)
		if f.LiarKind == Rational {
			kind = 2
		}
		r.lie[i].Store(kind)
	}
	before, err := r.credits(ctx)
	if err != nil {
		return jr, err
	}
	if f.Cut != [2]int{} {
		a, b := r.mesh.Members[f.Cut[0]].Host.ID(), r.mesh.Members[f.Cut[1]].Host.ID()
		if err := r.mn.UnlinkPeers(a, b); err != nil {
			return jr, fmt.Errorf("chaos: cutting %d–%d: %w", f.Cut[0], f.Cut[1], err)
		}
		_ = r.mn.DisconnectPeers(a, b)
	}
	start := time.Now()
	info, err := r.client().DApp.Submit(ctx, r.spec())
	if err != nil {
		return jr, fmt.Errorf("chaos: submitting job %d: %w", j, err)
	}
	jr.ID = info.ID()
	r.keys = append(r.keys, escrow.JobKey(common.Address(info.Creator), common.Hash(info.ID())))

	jctx, cancel := context.WithTimeout(ctx, r.cfg.JobTimeout)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); jr.Killed = r.kill(jctx, f) }()
	var w watch
	go func() { defer wg.Done(); w.run(jctx, r.client(), info.ID()) }()
	res, waitErr := r.client().DApp.Wait(jctx, info.ID(), 100*time.Millisecond)
	jr.Elapsed = time.Since(start)
	cancel()
	wg.Wait()
	if err := r.heal(ctx, f, jr.Killed); err != nil {
		return jr, err
	}
	jr.LastBlock = w.lastBlockToVerdict()
	if waitErr != nil {
		jr.Violations = append(jr.Violations, fmt.Sprintf("no release within %v (%v): %s", r.cfg.JobTimeout, waitErr, r.diagnose(ctx, info)))
		return jr, nil
	}
	jr.Settled = true
	jr.Culprits = r.indices(res.Culprits)
	jr.LiesAccepted = r.liesAccepted(info, res)
	jr.Violations = r.check(ctx, info, res, f, before)
	return jr, nil
}

// kill stops f's processor (and the bootstrap node) f.KillAfter after
// the submission, unless ctx ends first; it reports whether it did.
func (r *run) kill(ctx context.Context, f Faults) bool {
	if f.Kill == 0 {
		return false
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(f.KillAfter):
	}
	stop := []int{f.Kill}
	if f.Bootstrap {
		stop = append(stop, 0)
	}
	for _, i := range stop {
		if n := r.mesh.Members[i].Node; n != nil {
			r.droppedGone += counter(n, "jobmesh_p2p_fault_dropped_total")
		}
		if err := r.mesh.Stop(i); err != nil {
			r.cfg.Logger.Warn("chaos: stopping a member", "member", i, "err", err)
		}
	}
	return true
}

// heal relinks f's cut, restarts whoever kill stopped and makes every
// member honest again, so that the next job starts from the whole mesh.
func (r *run) heal(ctx context.Context, f Faults, killed bool) error {
	for i := range r.lie {
		r.lie[i].Store(0)
	}
	if f.Cut != [2]int{} {
		a, b := r.mesh.Members[f.Cut[0]].Host.ID(), r.mesh.Members[f.Cut[1]].Host.ID()
		if _, err := r.mn.LinkPeers(a, b); err != nil {
			return fmt.Errorf("chaos: relinking %d–%d: %w", f.Cut[0], f.Cut[1], err)
		}
	}
	if err := r.restake(ctx); err != nil {
		return err
	}
	if !killed {
		return nil
	}
	restart := []int{f.Kill}
	if f.Bootstrap {
		restart = []int{0, f.Kill}
	}
	for _, i := range restart {
		if err := r.mesh.Restart(ctx, i); err != nil {
			return fmt.Errorf("chaos: restarting member %d: %w", i, err)
		}
	}
	return r.waitFormed(ctx)
}

// restake tops up, to the escrow's minimum, the stake of every running
// processor a job slashed, as its operator would: each job starts with
// the whole mesh able to work.
func (r *run) restake(ctx context.Context) error {
	least, err := r.mesh.Escrow.MinStake(ctx)
	if err != nil {
		return fmt.Errorf("chaos: reading the minimum stake: %w", err)
	}
	for _, mem := range r.mesh.Running() {
		if mem.Role != node.RoleProcessor {
			continue
		}
		st, err := r.mesh.Escrow.StakeOf(ctx, mem.Wallet)
		if err != nil {
			return fmt.Errorf("chaos: stake of member %d: %w", mem.Index, err)
		}
		if st.Active.Cmp(least) >= 0 {
			continue
		}
		if _, err := mem.Escrow.Stake(ctx, new(big.Int).Sub(least, st.Active)); err != nil {
			return fmt.Errorf("chaos: restaking member %d: %w", mem.Index, err)
		}
		r.restaked++
	}
	return nil
}

// indices maps peer IDs to member indices; an ID of no member maps to
// -1.
func (r *run) indices(peers []string) []int {
	var out []int
	for _, p := range peers {
		i := slices.IndexFunc(r.mesh.Members, func(m *localmesh.Member) bool { return m.Host != nil && m.Host.ID().String() == p })
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

// credits reads every member wallet's credit in the escrow.
func (r *run) credits(ctx context.Context) (map[common.Address]*big.Int, error) {
	out := map[common.Address]*big.Int{}
	for _, mem := range r.mesh.Members {
		if mem.Wallet == (common.Address{}) {
			continue
		}
		c, err := r.mesh.Escrow.CreditOf(ctx, mem.Wallet)
		if err != nil {
			return nil, fmt.Errorf("chaos: credit of member %d: %w", mem.Index, err)
		}
		out[mem.Wallet] = c
	}
	return out, nil
}

// watch follows a job in the client's store: when its set of committed
// MicroJobs last grew, and when the verdict came.
type watch struct {
	lastCommit, verdict time.Time
}

func (w *watch) run(ctx context.Context, client *localmesh.Member, id jobs.ID) {
	seen := map[jobs.ID]bool{}
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		if recs, err := client.Store.Query(ctx, records.JobKey(id)+"/"); err == nil {
			for _, rec := range recs {
				k, err := records.Parse(rec.Key)
				if err == nil && rec.Type == records.CommitType && !seen[k.Micro] {
					seen[k.Micro] = true
					w.lastCommit = time.Now()
				}
			}
		}
		if _, ok, err := dapp.Status(ctx, client.Store, id); err == nil && ok {
			w.verdict = time.Now()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// lastBlockToVerdict is the time from the last new commitment to the
// verdict; zero without a verdict.
func (w *watch) lastBlockToVerdict() time.Duration {
	if w.verdict.IsZero() || w.lastCommit.IsZero() {
		return 0
	}
	return w.verdict.Sub(w.lastCommit)
}
