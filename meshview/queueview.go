package meshview

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// QueueView is the open-job queue as the store shows it: the jobs without
// a verdict or a JobAborted record, in their dispatch groups.
type QueueView struct {
	// Live is the number of live processors the cap was computed for.
	Live int
	// Cap is max(⌊α·Live⌋, MinQueueLen): the most processor slots the
	// queued (not started) jobs may wait for, each counting its replicas,
	// before the lowest-value ones are aborted (dispatch.Queue.Slots).
	Cap int
	// Groups are the queue groups, the group with the best head first.
	Groups []QueueGroup
}

// QueueGroup is one group of open jobs (by VRAM and GPU model), best
// first.
type QueueGroup struct {
	// Label is the group's name, e.g. "0/Any" or "24576/RTX 4090".
	Label string
	// Jobs are the group's jobs in queue order.
	Jobs []QueuedJob
}

// QueuedJob is one open job and its task value.
type QueuedJob struct {
	// ID is the job ID.
	ID jobs.ID
	// PriceWei is the escrowed price.
	PriceWei *big.Int
	// Value is the task value in wei per second; nil when it cannot be
	// computed (the estimated time overflows).
	Value *big.Rat
	// Estimated is the estimated execution time.
	Estimated time.Duration
	// Started is true once a MicroJob of the job is committed: the job is
	// being processed and no longer counts against the cap.
	Started bool
}

// FinishedJobs lists the jobs that have a verdict in the store written by
// a processor with a disclosure in the job (verdictScan). Which verdict
// counts, and whether any does, is ChooseVerdict's to say.
func FinishedJobs(ctx context.Context, store RecordReader) ([]jobs.ID, error) {
	recs, err := store.Query(ctx, records.JobsPrefix)
	if err != nil {
		return nil, err
	}
	var s verdictScan
	for _, r := range recs {
		s.add(r)
	}
	var out []jobs.ID
	for id := range s.finished() {
		out = append(out, id)
	}
	slices.SortFunc(out, compareIDs)
	return out, nil
}

// verdictScan finds, in one pass over the store's /jobs records, the jobs
// with a verdict written by a processor with a disclosure in the job: the
// author rule of verdicts without judging every job (finish/authors.go), for
// the queue and the dispatch history, which order work but decide no
// payout.
type verdictScan struct {
	disclosers map[jobs.ID]map[string]bool
	verdicts   map[jobs.ID][]string
}

func (s *verdictScan) add(r crdt.Record) {
	if r.Tombstone {
		return
	}
	if s.disclosers == nil {
		s.disclosers, s.verdicts = map[jobs.ID]map[string]bool{}, map[jobs.ID][]string{}
	}
	switch r.Type {
	case records.VerdictType:
		if k, err := records.Parse(r.Key); err == nil && k.Type == records.VerdictType {
			s.verdicts[k.Job] = append(s.verdicts[k.Job], k.Peer)
		}
	case records.ResultType:
		if k, err := records.Parse(r.Key); err == nil && k.Type == records.ResultType && k.Peer == r.AuthorText() {
			if s.disclosers[k.Job] == nil {
				s.disclosers[k.Job] = map[string]bool{}
			}
			s.disclosers[k.Job][k.Peer] = true
		}
	}
}

// finished returns the jobs with a verdict by one of their disclosers.
func (s *verdictScan) finished() map[jobs.ID]bool {
	out := map[jobs.ID]bool{}
	for id, authors := range s.verdicts {
		if slices.ContainsFunc(authors, func(a string) bool { return s.disclosers[id][a] }) {
			out[id] = true
		}
	}
	return out
}

// ReadQueue reads the open jobs from the store and orders them as
// dispatching does, for the live processors of v; a job v says is
// settled (View.Settled) is not open, though this node holds no verdict
// of it.
func ReadQueue(ctx context.Context, store RecordReader, cfg dispatch.Config, v *View) (QueueView, error) {
	if err := cfg.Validate(); err != nil {
		return QueueView{}, err
	}
	recs, err := store.Query(ctx, records.JobsPrefix)
	if err != nil {
		return QueueView{}, fmt.Errorf("meshview: reading jobs: %w", err)
	}
	open, started := openJobs(recs)
	maps.DeleteFunc(open, func(id jobs.ID, _ *jobs.JobInfo) bool { return v.Settled(id) })
	q, _ := dispatch.NewQueue(cfg)
	live := v.Live()
	return QueueView{Live: live, Cap: q.Cap(live), Groups: queueGroups(cfg, open, started)}, nil
}

// openJobs returns, from the store's /jobs records, the jobs with neither
// a verdict by one of their disclosers (verdictScan) nor a JobAborted
// record, and the jobs with a commitment.
func openJobs(recs []crdt.Record) (open map[jobs.ID]*jobs.JobInfo, started map[jobs.ID]bool) {
	open, started = map[jobs.ID]*jobs.JobInfo{}, map[jobs.ID]bool{}
	closed := map[jobs.ID]bool{}
	var scan verdictScan
	for _, r := range recs {
		if r.Tombstone {
			continue
		}
		switch r.Type {
		case records.JobType:
			if info, err := jobs.Decode(r.Payload); err == nil && records.JobKey(info.ID()) == r.Key {
				open[info.ID()] = info
			}
		case records.VerdictType, records.ResultType:
			scan.add(r)
		case records.AbortedType:
			if k, err := records.Parse(r.Key); err == nil && k.Type == records.AbortedType {
				if _, err := records.DecodeJobAborted(r.Key, r.Payload); err == nil {
					closed[k.Job] = true
				}
			}
		case records.CommitType:
			if id, ok := records.JobOf(r.Key); ok {
				started[id] = true
			}
		}
	}
	for id := range scan.finished() {
		closed[id] = true
	}
	for id := range closed {
		delete(open, id)
	}
	return open, started
}

// queueGroups groups the open jobs by dispatch group, each in queue order
// (task value, best first; a job without a value last, by ID), the group
// with the best head first.
func queueGroups(cfg dispatch.Config, open map[jobs.ID]*jobs.JobInfo, started map[jobs.ID]bool) []QueueGroup {
	type entry struct {
		job dispatch.Job
		qj  QueuedJob
	}
	entries := map[string][]entry{}
	for id, info := range open {
		plan, err := jobs.Slice(info)
		if err != nil {
			continue
		}
		j := DispatchJob(info, plan)
		qj := QueuedJob{ID: id, PriceWei: new(big.Int).Set(j.Price), Started: started[id]}
		if v, err := dispatch.TaskValue(cfg, j); err == nil {
			qj.Value = v
			qj.Estimated, _ = dispatch.EstimatedTime(cfg, j.Units)
		}
		label := dispatch.GroupLabel(j)
		entries[label] = append(entries[label], entry{j, qj})
	}
	var groups []QueueGroup
	for label, es := range entries {
		slices.SortFunc(es, func(a, b entry) int {
			switch {
			case a.qj.Value == nil && b.qj.Value == nil:
				return strings.Compare(a.job.ID, b.job.ID)
			case a.qj.Value == nil:
				return 1
			case b.qj.Value == nil:
				return -1
			}
			if less, _ := dispatch.Less(cfg, a.job, b.job); less {
				return -1
			}
			return 1
		})
		g := QueueGroup{Label: label}
		for _, e := range es {
			g.Jobs = append(g.Jobs, e.qj)
		}
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b QueueGroup) int {
		av, bv := a.Jobs[0].Value, b.Jobs[0].Value
		switch {
		case av != nil && bv != nil:
			if c := bv.Cmp(av); c != 0 {
				return c
			}
		case av != nil:
			return -1
		case bv != nil:
			return 1
		}
		return cmp.Compare(a.Label, b.Label)
	})
	return groups
}

// Evictions returns the jobs to abort so that the queued jobs fit the cap
// max(⌊α·live⌋, MinQueueLen), lowest task value first; a job counts once
// per replica (dispatch.Queue.Trim). queued are the open jobs nobody has
// started; the result is a pure function of them, cfg and live. A job whose value cannot be computed is never evicted (it already
// comes last in the job order).
func Evictions(cfg dispatch.Config, queued []dispatch.Job, live int) ([]dispatch.Job, error) {
	q, err := dispatch.NewQueue(cfg)
	if err != nil {
		return nil, err
	}
	for _, j := range queued {
		_ = q.Push(j)
	}
	return q.Trim(live), nil
}
