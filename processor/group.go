package processor

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/meshview"
	"github.com/jobmesh/jobmesh/records"
)

// A replicated job's group (meshview.ChooseGroup, meshview.PickGroup) is
// chosen and written by the first processor that takes the job; a member
// replaces members that stay silent, and only members open or join the
// job's rooms (groupwork.go).

// groupCache is a Worker's knowledge of the groups of replicated jobs.
type groupCache struct {
	// events counts group records written ("chosen", "replaced") and
	// waits for a group ("waiting", as often as they are logged). Nil:
	// not counted.
	events *prometheus.CounterVec

	mu     sync.Mutex
	groups map[jobs.ID]records.Group
	// waiting is when this worker last logged that a job waits for a
	// group, so that the log says it once a minute, not once a poll.
	waiting map[jobs.ID]time.Time
	// since is when this worker first saw each round of a job's group
	// ("<job>#<round>"): members silent for RerunTimeout after it are
	// replaced.
	since map[string]time.Time
}

// newGroupMetrics registers the group events counter with reg (nil: not
// registered, still counted).
func newGroupMetrics(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "jobmesh", Subsystem: "processor", Name: "group_events_total",
		Help: "Replicated jobs' group events: group records written (chosen, replaced) and waits for enough processors (waiting).",
	}, []string{"event"})
	if reg != nil {
		reg.MustRegister(c)
	}
	return c
}

func (c *groupCache) count(event string) {
	if c.events != nil {
		c.events.WithLabelValues(event).Inc()
	}
}

// replicated reports whether a job asks for R > 1 processors per MicroJob.
func replicated(js *jobState) bool { return js.info.Requirements.Replicas > 1 }

// groupOf returns the group of a replicated job: the winner among the
// store's group records, or, when there is none yet, one this processor
// chooses and writes. A member replaces members that stay silent
// (replaceSilent). ok is false while no group can be formed.
func (w *Worker) groupOf(ctx context.Context, js *jobState) (records.Group, bool) {
	id := js.plan.JobID
	view := w.dview.Load()
	pick := func() (records.Group, bool) {
		recs, err := w.p.Store.Query(ctx, records.GroupPrefix(id))
		if err != nil {
			return records.Group{}, false
		}
		p, err := w.progressOf(ctx, js)
		if err != nil {
			return records.Group{}, false
		}
		g, ok := meshview.PickGroup(js.info, view, recs, p.Active())
		if ok {
			w.rememberGroup(id, g)
		}
		return g, ok
	}
	if g, ok := pick(); ok {
		if g.Has(w.self) && w.replaceSilent(ctx, js, g, view) {
			if won, ok := pick(); ok {
				return won, true
			}
		}
		return g, true
	}
	g, err := meshview.ChooseGroup(js.info, w.groupCandidates(view), meshview.GroupSeed(js.info), w.self)
	if err != nil {
		w.logWaiting(js, err)
		return records.Group{}, false
	}
	if err := crdt.PutJSON(ctx, w.writer, records.GroupKey(id, w.self), records.GroupType, g); err != nil {
		w.log.Warn("writing a group record", "job", id, "err", err)
		return records.Group{}, false
	}
	w.groups.count("chosen")
	w.log.Info("chose the group of a replicated job", "job", id, "cardModel", g.CardModel, "members", g.Members)
	// Another processor may have written its choice meanwhile: read again
	// and take the winner.
	if won, ok := pick(); ok {
		return won, true
	}
	return g, true
}

// logWaiting says, at most once a minute per job, why a replicated job
// has no group.
func (w *Worker) logWaiting(js *jobState, err error) {
	id := js.plan.JobID
	now := time.Now()
	w.groups.mu.Lock()
	if w.groups.waiting == nil {
		w.groups.waiting = map[jobs.ID]time.Time{}
	}
	last := w.groups.waiting[id]
	if now.Sub(last) >= time.Minute {
		w.groups.waiting[id] = now
	}
	w.groups.mu.Unlock()
	if now.Sub(last) >= time.Minute {
		w.groups.count("waiting")
		r := js.info.Requirements
		w.log.Info("replicated job waits: no card model has enough live processors for its group",
			"job", id, "replicas", r.Replicas, "gpuModel", r.GPUModel, "minVRAMMiB", r.MinVRAMMiB, "err", err)
	}
}

// replaceSilent writes the next round of g when some member has
// committed nothing in the job for Config.RerunTimeout since this node
// first saw g: the silent members are dropped and as many others of the
// group's card model are drawn in their place (meshview.GroupSeed with the round),
// among the live, unkicked, eligible processors that are neither members
// nor dropped before. It reports whether it wrote a record.
func (w *Worker) replaceSilent(ctx context.Context, js *jobState, g records.Group, view *meshview.View) bool {
	id := js.plan.JobID
	p, err := w.progressOf(ctx, js)
	if err != nil {
		return false
	}
	active := p.Active()
	var silent []string
	for _, m := range g.Members {
		if !active[m] && m != w.self {
			silent = append(silent, m)
		}
	}
	key := id.String() + "#" + strconv.FormatUint(uint64(g.Round), 10)
	now := time.Now()
	w.groups.mu.Lock()
	if w.groups.since == nil {
		w.groups.since = map[string]time.Time{}
	}
	since, seen := w.groups.since[key]
	if !seen {
		w.groups.since[key] = now
	}
	w.groups.mu.Unlock()
	if len(silent) == 0 || !seen || now.Sub(since) < w.cfg.RerunTimeout {
		return false
	}
	next, fresh, err := meshview.Replacement(js.info, g, silent, w.groupCandidates(view), w.self)
	if err != nil {
		w.logWaiting(js, fmt.Errorf("replacing silent members %v: %w", silent, err))
		return false
	}
	if err := crdt.PutJSON(ctx, w.writer, records.GroupKey(id, w.self), records.GroupType, next); err != nil {
		w.log.Warn("writing a group record", "job", id, "err", err)
		return false
	}
	w.groups.count("replaced")
	w.log.Info("replaced silent group members", "job", id, "round", next.Round, "silent", silent, "new", fresh)
	return true
}

func (w *Worker) rememberGroup(id jobs.ID, g records.Group) {
	w.groups.mu.Lock()
	defer w.groups.mu.Unlock()
	if w.groups.groups == nil {
		w.groups.groups = map[jobs.ID]records.Group{}
	}
	w.groups.groups[id] = g
	delete(w.groups.waiting, id)
}

// groupCandidates are the live, unkicked processors of the dispatch view
// with their selection weights, and this processor itself (it may not
// see its own advertisement yet).
func (w *Worker) groupCandidates(view *meshview.View) []meshview.GroupCandidate {
	ids := []string{w.self}
	nodes := map[string]dispatch.Node{w.self: w.selfNode()}
	if view != nil {
		for _, p := range view.Processors {
			if p.Kick != nil || view.Kicked(p.ID) {
				continue
			}
			if p.ID != w.self {
				ids = append(ids, p.ID)
			}
			nodes[p.ID] = p.Node
		}
	}
	weights := w.SelectionWeights(ids)
	out := make([]meshview.GroupCandidate, len(ids))
	for i, id := range ids {
		n := nodes[id]
		out[i] = meshview.GroupCandidate{ID: id, CardModel: n.CardModel, VRAM: n.VRAM, Weight: weights[i]}
	}
	return out
}

// mayWork reports whether this processor may work on js: any processor on
// a job with R = 1, only the group's members on a replicated job (the
// group is chosen here if nobody has chosen it yet).
func (w *Worker) mayWork(ctx context.Context, js *jobState) bool {
	if !replicated(js) {
		return true
	}
	g, ok := w.groupOf(ctx, js)
	return ok && g.Has(w.self)
}

// mayRedo reports whether this processor may take redo request rd of js:
// any processor for R = 1. For a replicated job a redo is work outside
// the rooms, for a processor of the group's card model that is not a
// member (members run the job through its rooms) and has not committed
// to the MicroJob, and only once the MicroJob's MacroJob has finished its
// commitment round (before that, the MicroJob is still being run in its
// room; a redo then would only duplicate it).
func (w *Worker) mayRedo(ctx context.Context, js *jobState, rd records.Redo) bool {
	if !replicated(js) {
		return true
	}
	w.groups.mu.Lock()
	g, ok := w.groups.groups[js.plan.JobID]
	w.groups.mu.Unlock()
	if !ok || g.CardModel != w.cfg.CardModel || g.Has(w.self) {
		return false
	}
	mid, err := jobs.ParseHash(rd.Micro)
	if err != nil {
		return false
	}
	mu, err := js.plan.MicroJob(mid)
	if err != nil {
		return false
	}
	p, err := w.progressOf(ctx, js)
	return err == nil && !slices.Contains(p.CommittedBy(mid), w.self) && p.MacroFull(&js.plan.Macros[mu.Macro], nil)
}
