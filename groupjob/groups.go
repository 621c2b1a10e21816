package groupjob

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/meshview"
	"github.com/jobmesh/jobmesh/records"
)

// Records reads a job's group records (the replicated store).
type Records interface {
	Query(ctx context.Context, prefix string) ([]crdt.Record, error)
}

// Writer writes this processor's group records (the processor's record
// index writer, so that its own records count at once).
type Writer interface {
	Put(ctx context.Context, key, recordType string, payload []byte) error
}

// Progresses tell how far a job is (jobindex.Index): who committed to
// what, and whether a MacroJob's commitment round is over.
type Progresses interface {
	Progress(ctx context.Context, id jobs.ID, replicas int) (finish.Progress, error)
}

// Views hold the latest dispatch view (the processor's
// atomic.Pointer[meshview.View]); Load may return nil before the first.
type Views interface {
	Load() *meshview.View
}

// ErrInvalid is wrapped by the errors of New.
var ErrInvalid = errors.New("groupjob: invalid params or config")

// waitLogEvery is how often a job waiting for a group is logged: once a
// minute, not once a poll.
const waitLogEvery = time.Minute

// Config tunes Groups.
type Config struct {
	// CardModel and VRAMMiB are this processor's hardware: it is a
	// candidate for groups of its card model. Default "cpu" and 0.
	CardModel string
	VRAMMiB   uint64
	// SilentAfter is how long a member may go without any commitment in
	// the job, after this node first saw the group's round, before
	// another member replaces it (the processor's RerunTimeout). Default
	// 2m.
	SilentAfter time.Duration
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{CardModel: "cpu", SilentAfter: 2 * time.Minute}
}

// Validate checks the config.
func (c Config) Validate() error {
	if c.SilentAfter <= 0 {
		return fmt.Errorf("%w: silent-after must be positive", ErrInvalid)
	}
	return nil
}

// Params are what Groups reads and writes through; it closes none of them.
type Params struct {
	// Self is this processor's peer ID. Required.
	Self string
	// Records, Writer, Progress and Views are required.
	Records  Records
	Writer   Writer
	Progress Progresses
	Views    Views
	// Now tells when a group round was first seen and when a wait was last
	// logged; nil: time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Registerer registers the group events counter (nil: counted, not
	// registered).
	Registerer prometheus.Registerer
}

// Groups is one processor's share of the group-job role: the groups it
// knows, the rounds it has seen and the waits it has logged, behind a
// mutex of its own that is never held across a call to its Params.
type Groups struct {
	cfg      Config
	self     string
	records  Records
	writer   Writer
	progress Progresses
	views    Views
	now      func() time.Time
	log      *slog.Logger
	// events counts group records written ("chosen", "replaced") and
	// waits for a group ("waiting", as often as they are logged).
	events *prometheus.CounterVec

	mu     sync.Mutex
	groups map[jobs.ID]records.Group
	// waiting is when this processor last logged that a job waits for a
	// group.
	waiting map[jobs.ID]time.Time
	// since is when this processor first saw each round of a job's group
	// ("<job>#<round>"): members silent for SilentAfter after it are
	// replaced.
	since map[string]time.Time
}

// New returns the Groups of processor p.Self.
func New(p Params, cfg Config) (*Groups, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if p.Self == "" || p.Records == nil || p.Writer == nil || p.Progress == nil || p.Views == nil {
		return nil, fmt.Errorf("%w: self, records, writer, progress and views are required", ErrInvalid)
	}
	g := &Groups{cfg: cfg, self: p.Self, records: p.Records, writer: p.Writer, progress: p.Progress, views: p.Views,
		now: p.Now, log: p.Logger, events: newMetrics(p.Registerer),
		groups: map[jobs.ID]records.Group{}, waiting: map[jobs.ID]time.Time{}, since: map[string]time.Time{}}
	if g.now == nil {
		g.now = time.Now
	}
	if g.log == nil {
		g.log = slog.Default()
	}
	return g, nil
}

// newMetrics registers the group events counter with reg (nil: not
// registered, still counted). Its name keeps the processor's subsystem:
// dashboards read it there.
func newMetrics(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "jobmesh", Subsystem: "processor", Name: "group_events_total",
		Help: "Replicated jobs' group events: group records written (chosen, replaced) and waits for enough processors (waiting).",
	}, []string{"event"})
	if reg != nil {
		reg.MustRegister(c)
	}
	return c
}

func (g *Groups) count(event string) { g.events.WithLabelValues(event).Inc() }

// progressOf is the progress of the job of info and plan, counting its
// replicas.
func (g *Groups) progressOf(ctx context.Context, info *jobs.JobInfo, plan *jobs.Plan) (finish.Progress, error) {
	return g.progress.Progress(ctx, plan.JobID, int(info.Requirements.Replicas))
}

// MayWork reports whether this processor may work on a job: any processor
// on a job with R = 1, only the group's members on a replicated job (the
// group is chosen here if nobody has chosen it yet).
func (g *Groups) MayWork(ctx context.Context, info *jobs.JobInfo, plan *jobs.Plan) bool {
	if !Replicated(info) {
		return true
	}
	grp, ok := g.groupOf(ctx, info, plan)
	return ok && grp.Has(g.self)
}

// groupOf returns the group of a replicated job: the winner among the
// store's group records, or, when there is none yet, one this processor
// chooses and writes. A member replaces members that stay silent
// (replaceSilent). ok is false while no group can be formed.
func (g *Groups) groupOf(ctx context.Context, info *jobs.JobInfo, plan *jobs.Plan) (records.Group, bool) {
	id := plan.JobID
	view := g.views.Load()
	pick := func() (records.Group, bool) {
		recs, err := g.records.Query(ctx, records.GroupPrefix(id))
		if err != nil {
			return records.Group{}, false
		}
		p, err := g.progressOf(ctx, info, plan)
		if err != nil {
			return records.Group{}, false
		}
		grp, ok := meshview.PickGroup(info, view, recs, p.Active())
		if ok {
			g.remember(id, grp)
		}
		return grp, ok
	}
	if grp, ok := pick(); ok {
		if grp.Has(g.self) && g.replaceSilent(ctx, info, plan, grp, view) {
			if won, ok := pick(); ok {
				return won, true
			}
		}
		return grp, true
	}
	grp, err := meshview.ChooseGroup(info, g.candidates(view), meshview.GroupSeed(info), g.self)
	if err != nil {
		g.logWaiting(info, id, err)
		return records.Group{}, false
	}
	if !g.put(ctx, id, grp) {
		return records.Group{}, false
	}
	g.count("chosen")
	g.log.Info("chose the group of a replicated job", "job", id, "cardModel", grp.CardModel, "members", grp.Members)
	// Another processor may have written its choice meanwhile: read again
	// and take the winner.
	if won, ok := pick(); ok {
		return won, true
	}
	return grp, true
}

// put writes grp as this processor's group record of job id.
func (g *Groups) put(ctx context.Context, id jobs.ID, grp records.Group) bool {
	e, err := crdt.JSONEntry(records.GroupKey(id, g.self), records.GroupType, grp)
	if err == nil {
		err = g.writer.Put(ctx, e.Key, e.Type, e.Payload)
	}
	if err != nil {
		g.log.Warn("writing a group record", "job", id, "err", err)
		return false
	}
	return true
}

// logWaiting says, at most once a minute per job, why a replicated job
// has no group.
func (g *Groups) logWaiting(info *jobs.JobInfo, id jobs.ID, err error) {
	now := g.now()
	g.mu.Lock()
	last := g.waiting[id]
	due := now.Sub(last) >= waitLogEvery
	if due {
		g.waiting[id] = now
	}
	g.mu.Unlock()
	if due {
		g.count("waiting")
		r := info.Requirements
		g.log.Info("replicated job waits: no card model has enough live processors for its group",
			"job", id, "replicas", r.Replicas, "gpuModel", r.GPUModel, "minVRAMMiB", r.MinVRAMMiB, "err", err)
	}
}

// replaceSilent writes the next round of grp when some member has
// committed nothing in the job for Config.SilentAfter since this node
// first saw grp: the silent members are dropped and as many others of the
// group's card model are drawn in their place (meshview.Replacement),
// among the live, unkicked, eligible processors that are neither members
// nor dropped before. It reports whether it wrote a record.
func (g *Groups) replaceSilent(ctx context.Context, info *jobs.JobInfo, plan *jobs.Plan, grp records.Group, view *meshview.View) bool {
	id := plan.JobID
	p, err := g.progressOf(ctx, info, plan)
	if err != nil {
		return false
	}
	active := p.Active()
	var silent []string
	for _, m := range grp.Members {
		if !active[m] && m != g.self {
			silent = append(silent, m)
		}
	}
	key := id.String() + "#" + strconv.FormatUint(uint64(grp.Round), 10)
	now := g.now()
	g.mu.Lock()
	since, seen := g.since[key]
	if !seen {
		g.since[key] = now
	}
	g.mu.Unlock()
	if len(silent) == 0 || !seen || now.Sub(since) < g.cfg.SilentAfter {
		return false
	}
	next, fresh, err := meshview.Replacement(info, grp, silent, g.candidates(view), g.self)
	if err != nil {
		g.logWaiting(info, id, fmt.Errorf("replacing silent members %v: %w", silent, err))
		return false
	}
	if !g.put(ctx, id, next) {
		return false
	}
	g.count("replaced")
	g.log.Info("replaced silent group members", "job", id, "round", next.Round, "silent", silent, "new", fresh)
	return true
}

func (g *Groups) remember(id jobs.ID, grp records.Group) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.groups[id] = grp
	delete(g.waiting, id)
}

// candidates are the live, unkicked processors of the dispatch view with
// their selection weights, and this processor itself (it may not see its
// own advertisement yet).
func (g *Groups) candidates(view *meshview.View) []meshview.GroupCandidate {
	ids := []string{g.self}
	nodes := map[string]dispatch.Node{g.self: {ID: g.self, CardModel: g.cfg.CardModel, VRAM: g.cfg.VRAMMiB}}
	if view != nil {
		for _, p := range view.Processors {
			if p.Kick != nil || view.Kicked(p.ID) {
				continue
			}
			if p.ID != g.self {
				ids = append(ids, p.ID)
			}
			nodes[p.ID] = p.Node
		}
	}
	weights := view.JobWeights(dispatch.Job{}, ids)
	out := make([]meshview.GroupCandidate, len(ids))
	for i, id := range ids {
		n := nodes[id]
		out[i] = meshview.GroupCandidate{ID: id, CardModel: n.CardModel, VRAM: n.VRAM, Weight: weights[i]}
	}
	return out
}

// MayRedo reports whether this processor may take redo request rd of a
// job: any processor for R = 1. For a replicated job a redo is work
// outside the rooms, for a processor of the group's card model that is
// not a member (members run the job through its rooms) and has not
// committed to the MicroJob, and only once the MicroJob's MacroJob has
// finished its commitment round (before that, the MicroJob is still being
// run in its room; a redo then would only duplicate it).
func (g *Groups) MayRedo(ctx context.Context, info *jobs.JobInfo, plan *jobs.Plan, rd records.Redo) bool {
	if !Replicated(info) {
		return true
	}
	g.mu.Lock()
	grp, ok := g.groups[plan.JobID]
	g.mu.Unlock()
	if !ok || grp.CardModel != g.cfg.CardModel || grp.Has(g.self) {
		return false
	}
	mid, err := jobs.ParseHash(rd.Micro)
	if err != nil {
		return false
	}
	mu, err := plan.MicroJob(mid)
	if err != nil {
		return false
	}
	p, err := g.progressOf(ctx, info, plan)
	return err == nil && !slices.Contains(p.CommittedBy(mid), g.self) && p.MacroFull(&plan.Macros[mu.Macro], nil)
}

// Silent keeps, of the MicroJobs to redo because their committers never
// disclosed (finish.SilentCommitters, by MicroJob), those of MacroJobs
// whose commitment round is over (finish.Progress.MacroFull): in a
// replicated job a MacroJob discloses only once every MicroJob has R
// committers, and its first committers are not silent before that. A job
// with R = 1 keeps silent as it is.
func (g *Groups) Silent(ctx context.Context, info *jobs.JobInfo, plan *jobs.Plan, silent map[string][]string) map[string][]string {
	if !Replicated(info) || len(silent) == 0 {
		return silent
	}
	p, err := g.progressOf(ctx, info, plan)
	if err != nil {
		return nil
	}
	out := map[string][]string{}
	for m, ps := range silent {
		id, err := jobs.ParseHash(m)
		if err != nil {
			continue
		}
		mu, err := plan.MicroJob(id)
		if err != nil || !p.MacroFull(&plan.Macros[mu.Macro], nil) {
			continue
		}
		out[m] = ps
	}
	return out
}
