package processor

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// Replicated group jobs (jobs.Requirements.Replicas R > 1, seed 000's
// "3 nodes of the same card model"): the first processor that takes such a
// job chooses a group of R processors of one card model and writes it
// under records.GroupKey; only the group's members open or join the job's
// rooms, and each MicroJob is run by R of them (see groupwork.go).

// ErrNoGroup means no card model has R eligible processors: a replicated
// job waits until one has.
var ErrNoGroup = errors.New("processor: no card model has enough processors for the group")

// groupDigest orders competing group records: SHA-256 of the payload.
func groupDigest(payload []byte) [32]byte { return sha256.Sum256(payload) }

// PickGroup returns the winner among a job's group records. Of the records
// that decode and check, and whose members known to view have the group's
// card model, the round-0 winner is the one with the lowest SHA-256 of
// its payload; then, round by round, the winner of round k is the
// lowest-hash record of round k that extends the winner of round k-1: the
// same card model, written by one of its members that it keeps, keeping
// every other member except those it drops, and dropping only members
// that have committed nothing in the job (active lists those that have).
// Every node holding the same records picks the same winner, whoever
// wrote first. ok is false when no record qualifies.
func PickGroup(info *jobs.JobInfo, view *View, recs []crdt.Record, active map[string]bool) (records.Group, bool) {
	type cand struct {
		g   records.Group
		sum [32]byte
	}
	byRound := map[uint32][]cand{}
	for _, r := range recs {
		if r.Type != records.GroupType || r.Tombstone {
			continue
		}
		g, err := records.DecodeGroup(info, r.Key, r.Author.String(), r.Payload)
		if err != nil || !cardsMatch(g, view) {
			continue
		}
		byRound[g.Round] = append(byRound[g.Round], cand{g, groupDigest(r.Payload)})
	}
	var cur records.Group
	for k := uint32(0); ; k++ {
		var best *cand
		for i, c := range byRound[k] {
			if k > 0 && !extends(c.g, cur, active) {
				continue
			}
			if best == nil || bytes.Compare(c.sum[:], best.sum[:]) < 0 {
				best = &byRound[k][i]
			}
		}
		if best == nil {
			return cur, k > 0
		}
		cur = best.g
	}
}

// extends reports whether g is a valid replacement of prev (see PickGroup).
func extends(g, prev records.Group, active map[string]bool) bool {
	if g.CardModel != prev.CardModel || !prev.Has(g.Chooser) || !g.Has(g.Chooser) {
		return false
	}
	for _, d := range prev.Dropped {
		if _, ok := slices.BinarySearch(g.Dropped, d); !ok {
			return false
		}
	}
	dropped := 0
	for _, m := range prev.Members {
		if g.Has(m) {
			continue
		}
		if _, ok := slices.BinarySearch(g.Dropped, m); !ok || active[m] {
			return false
		}
		dropped++
	}
	// Everything g drops was a member of prev or dropped before it.
	return dropped > 0 && len(g.Dropped) == len(prev.Dropped)+dropped
}

// cardsMatch reports whether every member view knows advertises the
// group's card model (members it does not know yet are given the benefit
// of the doubt: their advertisement may not have arrived).
func cardsMatch(g records.Group, view *View) bool {
	for _, m := range g.Members {
		if p, ok := view.Processor(m); ok && p.CardModel != g.CardModel {
			return false
		}
	}
	return true
}

// GroupCandidate is one processor a group may be drawn from.
type GroupCandidate struct {
	ID        string  // peer ID
	CardModel string  // advertised card model
	VRAM      uint64  // advertised VRAM in MiB
	Weight    float64 // selection weight W; 0 leaves it out
}

// GroupSeed is the public seed a job's group is drawn from: the job seed
// and ID, so that anyone can repeat the draw from the same candidates.
func GroupSeed(info *jobs.JobInfo) []byte {
	id := info.ID()
	return dispatch.Seed(info.Seed[:], id[:], []byte("group"))
}

// ChooseGroup draws the group of a replicated job from cands (seed 000):
// the candidates eligible for the job (VRAM ≥ MinVRAMMiB, the required GPU
// model if set, weight > 0) are graded by card model; a card model with at
// least R of them is drawn with probability proportional to its members'
// total weight (fair to processors, not to models), then R distinct
// members of it by weight. A pure function of its arguments. ErrNoGroup
// when no card model has R eligible candidates.
func ChooseGroup(info *jobs.JobInfo, cands []GroupCandidate, seed []byte, chooser string) (records.Group, error) {
	req := info.Requirements
	r := int(req.Replicas)
	if r < 1 {
		r = 1
	}
	byModel := map[string][]GroupCandidate{}
	for _, c := range cands {
		if c.Weight > 0 && c.VRAM >= req.MinVRAMMiB && c.CardModel != "" && (req.GPUModel == "" || c.CardModel == req.GPUModel) {
			byModel[c.CardModel] = append(byModel[c.CardModel], c)
		}
	}
	var models []string
	for m, cs := range byModel {
		if len(cs) >= r {
			models = append(models, m)
		}
	}
	if len(models) == 0 {
		return records.Group{}, fmt.Errorf("%w: %d of one card model needed, %d eligible candidates", ErrNoGroup, r, eligibleCount(byModel))
	}
	slices.Sort(models)
	weights := make([]float64, len(models))
	for i, m := range models {
		cs := byModel[m]
		slices.SortFunc(cs, func(a, b GroupCandidate) int { return cmp.Compare(a.ID, b.ID) })
		cs = slices.CompactFunc(cs, func(a, b GroupCandidate) bool { return a.ID == b.ID })
		byModel[m] = cs
		for _, c := range cs {
			weights[i] += c.Weight
		}
		if len(cs) < r {
			weights[i] = 0 // duplicates counted twice above
		}
	}
	k, err := dispatch.Choose(weights, dispatch.Seed(seed, []byte("model")))
	if err != nil {
		return records.Group{}, fmt.Errorf("%w: %w", ErrNoGroup, err)
	}
	pool := slices.Clone(byModel[models[k]])
	members := make([]string, 0, r)
	for i := range r {
		w := make([]float64, len(pool))
		for j, c := range pool {
			w[j] = c.Weight
		}
		j, err := dispatch.Choose(w, dispatch.Seed(seed, []byte("member"), []byte(strconv.Itoa(i))))
		if err != nil {
			return records.Group{}, fmt.Errorf("%w: %w", ErrNoGroup, err)
		}
		members = append(members, pool[j].ID)
		pool = slices.Delete(pool, j, j+1)
	}
	slices.Sort(members)
	return records.Group{Version: records.GroupVersion, Job: info.ID().String(), CardModel: models[k], Members: members, Chooser: chooser}, nil
}

func eligibleCount(m map[string][]GroupCandidate) int {
	n := 0
	for _, cs := range m {
		n += len(cs)
	}
	return n
}

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
		g, ok := PickGroup(js.info, view, recs, p.Active())
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
	g, err := ChooseGroup(js.info, w.groupCandidates(view), GroupSeed(js.info), w.self)
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
// group's card model are drawn in their place (GroupSeed with the round),
// among the live, unkicked, eligible processors that are neither members
// nor dropped before. It reports whether it wrote a record.
func (w *Worker) replaceSilent(ctx context.Context, js *jobState, g records.Group, view *View) bool {
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
	var cands []GroupCandidate
	for _, c := range w.groupCandidates(view) {
		if c.CardModel == g.CardModel && !g.Has(c.ID) && !slices.Contains(g.Dropped, c.ID) {
			cands = append(cands, c)
		}
	}
	sub := *js.info
	sub.Requirements.Replicas = uint32(len(silent))
	sub.Requirements.GPUModel = g.CardModel
	seed := dispatch.Seed(GroupSeed(js.info), []byte("round"), []byte(strconv.FormatUint(uint64(g.Round)+1, 10)))
	fresh, err := ChooseGroup(&sub, cands, seed, w.self)
	if err != nil {
		w.logWaiting(js, fmt.Errorf("replacing silent members %v: %w", silent, err))
		return false
	}
	next := records.Group{Version: records.GroupVersion, Job: g.Job, CardModel: g.CardModel, Chooser: w.self, Round: g.Round + 1}
	for _, m := range g.Members {
		if !slices.Contains(silent, m) {
			next.Members = append(next.Members, m)
		}
	}
	next.Members = append(next.Members, fresh.Members...)
	slices.Sort(next.Members)
	next.Dropped = append(slices.Clone(g.Dropped), silent...)
	slices.Sort(next.Dropped)
	if err := crdt.PutJSON(ctx, w.writer, records.GroupKey(id, w.self), records.GroupType, next); err != nil {
		w.log.Warn("writing a group record", "job", id, "err", err)
		return false
	}
	w.groups.count("replaced")
	w.log.Info("replaced silent group members", "job", id, "round", next.Round, "silent", silent, "new", fresh.Members)
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
func (w *Worker) groupCandidates(view *View) []GroupCandidate {
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
	out := make([]GroupCandidate, len(ids))
	for i, id := range ids {
		n := nodes[id]
		out[i] = GroupCandidate{ID: id, CardModel: n.CardModel, VRAM: n.VRAM, Weight: weights[i]}
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
