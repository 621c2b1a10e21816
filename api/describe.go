package api

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// Describe returns everything the store (and the chain) says of one job:
// its summary, plan, MicroJobs and their states, who ran what, its
// records as events and what went wrong. ErrNoSuchJob when the store has
// no such job.
func (v *JobView) Describe(ctx context.Context, id jobs.ID) (apiv1.JobDescription, error) {
	info, rec, err := v.load(ctx, id)
	if err != nil {
		return apiv1.JobDescription{}, err
	}
	j, err := v.summary(ctx, info, rec)
	if err != nil {
		return apiv1.JobDescription{}, err
	}
	plan, err := v.plan(info)
	if err != nil {
		return apiv1.JobDescription{}, fmt.Errorf("api: job %s does not slice: %w", id, err)
	}
	recs, err := v.Store.Query(ctx, records.JobKey(id)+"/")
	if err != nil {
		return apiv1.JobDescription{}, err
	}
	d := apiv1.JobDescription{
		Job:        j,
		Plan:       PlanOf(info.Data.Size, info.Slicing, info.Requirements.Replicas, info.PriceWei),
		MacroJobs:  []apiv1.MacroJobInfo{},
		Processors: map[string][]string{},
		Errors:     []string{},
	}
	l := info.Limits
	d.Plan.Limits = apiv1.Limits{BlockTimeoutS: l.BlockTimeoutS, MemoryMiB: l.MemoryMiB, OutputMiB: l.OutputMiB}
	var st microStates
	st.read(info, recs)
	if st.seed != nil {
		if checked, err := plan.WithChecks(*st.seed); err == nil {
			plan, d.ChecksDrawn = checked, true
		}
	}
	listed := 0
	for _, m := range plan.Macros {
		mi := apiv1.MacroJobInfo{Index: m.Index, ID: m.ID.String(), MicroJobs: []apiv1.MicroJobInfo{}}
		for _, mj := range m.Micros {
			if listed == apiv1.MaxDescribedMicroJobs {
				d.MicroJobsLeftOut++
				continue
			}
			listed++
			mi.MicroJobs = append(mi.MicroJobs, st.info(mj))
		}
		d.MacroJobs = append(d.MacroJobs, mi)
	}
	for p, ms := range st.byPeer {
		slices.Sort(ms)
		d.Processors[p] = ms
	}
	d.Events, d.EventsLeftOut = events(rec, recs)
	d.Errors = append(d.Errors, st.errors...)
	for _, u := range j.Undecided {
		d.Errors = append(d.Errors, fmt.Sprintf("block %d is undecided (%s between %s): %s", u.Block, u.Kind, strings.Join(u.Sides, ", "), u.Reason))
	}
	for _, c := range j.Culprits {
		d.Errors = append(d.Errors, fmt.Sprintf("processor %s is a culprit: its results were outvoted, and it is not paid", c))
	}
	return d, nil
}

// microStates is what a job's records say of its MicroJobs.
type microStates struct {
	seed                 *jobs.Seed // the creator's revealed check seed
	committed, disclosed map[jobs.ID][]string
	redo                 map[jobs.ID]bool
	checked              map[uint64]bool // blocks checked or disputed
	byPeer               map[string][]string
	errors               []string
}

func (s *microStates) read(info *jobs.JobInfo, recs []crdt.Record) {
	s.committed, s.disclosed = map[jobs.ID][]string{}, map[jobs.ID][]string{}
	s.redo, s.checked, s.byPeer = map[jobs.ID]bool{}, map[uint64]bool{}, map[string][]string{}
	id := info.ID()
	for _, r := range recs {
		k, err := records.Parse(r.Key)
		// The store checked each record's signature; a per-peer key
		// counts only when its author is the peer it names.
		if err != nil || k.Job != id || (k.Peer != "" && k.Peer != r.AuthorText()) || r.Tombstone {
			continue
		}
		switch k.Type {
		case records.CommitType:
			s.committed[k.Micro] = append(s.committed[k.Micro], k.Peer)
			s.byPeer[k.Peer] = append(s.byPeer[k.Peer], k.Micro.String())
		case records.ResultType:
			s.disclosed[k.Micro] = append(s.disclosed[k.Micro], k.Peer)
		case records.CheckType:
			s.checked[k.Block] = true
		case records.DisputeType:
			s.checked[k.Block] = true
			s.errors = append(s.errors, fmt.Sprintf("block %d: disputed by %s: two results disagree", k.Block, k.Peer))
		case records.RedoType:
			s.redo[k.Micro] = true
			s.errors = append(s.errors, fmt.Sprintf("MicroJob %s: redo ordered by %s", k.Micro, k.Peer))
		case records.RevealType:
			if seed, err := records.CheckReveal(info, r.Payload); err == nil {
				s.seed = &seed
			}
		}
	}
}

// info is MicroJob mj with its state.
func (s *microStates) info(mj jobs.MicroJob) apiv1.MicroJobInfo {
	mi := apiv1.MicroJobInfo{ID: mj.ID.String(), Slot: mj.Slot, Verifier: mj.Verifier, Blocks: slices.Clone(mj.Blocks),
		State: apiv1.MicroPending, Committed: sortedPeers(s.committed[mj.ID]), Disclosed: sortedPeers(s.disclosed[mj.ID])}
	switch {
	case s.redo[mj.ID]:
		mi.State = apiv1.MicroRedo
	case slices.ContainsFunc(mj.Blocks, func(b uint64) bool { return s.checked[b] }):
		mi.State = apiv1.MicroChecked
	case len(mi.Disclosed) > 0:
		mi.State = apiv1.MicroDisclosed
	case len(mi.Committed) > 0:
		mi.State = apiv1.MicroCommitted
	}
	return mi
}

func sortedPeers(ps []string) []string {
	out := append([]string{}, ps...)
	slices.Sort(out)
	return slices.Compact(out)
}

// events are the job record and the job's records as events, oldest
// first, the newest MaxDescribedEvents of them, and how many were left
// out.
func events(job crdt.Record, recs []crdt.Record) ([]apiv1.JobEvent, int) {
	all := append([]crdt.Record{job}, recs...)
	slices.SortStableFunc(all, func(a, b crdt.Record) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), strings.Compare(a.Key, b.Key))
	})
	left := max(0, len(all)-apiv1.MaxDescribedEvents)
	out := make([]apiv1.JobEvent, 0, len(all)-left)
	for _, r := range all[left:] {
		out = append(out, apiv1.JobEvent{Time: r.Time().UTC(), Type: r.Type, Peer: r.AuthorText(), Text: eventText(r)})
	}
	return out, left
}

// eventText says in one line what record r is.
func eventText(r crdt.Record) string {
	if r.Tombstone {
		return "deleted " + r.Key
	}
	k, err := records.Parse(r.Key)
	if err != nil {
		return r.Type + " " + r.Key
	}
	short := func(h jobs.ID) string { return h.String()[:12] }
	switch k.Type {
	case records.JobType:
		return "job published"
	case records.CommitType:
		return fmt.Sprintf("MicroJob %s (MacroJob %d) committed", short(k.Micro), k.Macro)
	case records.ResultType:
		return fmt.Sprintf("MicroJob %s (MacroJob %d) disclosed", short(k.Micro), k.Macro)
	case records.TookType:
		return fmt.Sprintf("MacroJob %d taken", k.Macro)
	case records.RoomLockType:
		return fmt.Sprintf("MacroJob %d room opened", k.Macro)
	case records.CheckType:
		return fmt.Sprintf("block %d checked", k.Block)
	case records.DisputeType:
		return fmt.Sprintf("block %d disputed", k.Block)
	case records.RerunType:
		return fmt.Sprintf("block %d re-run for a dispute", k.Block)
	case records.RedoType:
		return fmt.Sprintf("MicroJob %s redo ordered", short(k.Micro))
	case records.RevealType:
		return "check seed revealed: the verifier MicroJobs are drawn"
	case records.VerdictType:
		return "verdict written"
	case records.HolderType:
		return "holds the output"
	case records.SettlementType, records.SignatureType:
		return "settlement " + map[bool]string{true: "signed", false: "derived"}[k.Type == records.SignatureType]
	case records.SettledType:
		return "settled on chain"
	case records.CancelType:
		return "cancelled by the creator"
	case records.AbortedType:
		return "escrow aborted"
	case records.FailureType:
		if f, err := records.DecodeFailure(r.Key, r.AuthorText(), r.Payload); err == nil && len(f.Micro) >= 12 {
			return fmt.Sprintf("MicroJob %s failed here: %s", f.Micro[:12], f.Kind)
		}
		return "failure reported"
	}
	return k.Type
}
