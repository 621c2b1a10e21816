package meshview

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/probe"
	"github.com/jobmesh/jobmesh/records"
)

// Directory lists the processors known from their advertisements
// (/nodes/<peer>). The node supplies it from its advertisement records, so
// that this package does not depend on the advertisement schema.
type Directory interface {
	Processors(ctx context.Context) ([]Advertised, error)
}

// StakeReader reads a processor wallet's stake; *escrow.Client is one.
type StakeReader interface {
	StakeOf(ctx context.Context, processor common.Address) (escrow.Stake, error)
}

// RecordReader is the part of the replicated store Facts reads.
type RecordReader interface {
	Get(ctx context.Context, key string) (crdt.Record, error)
	Query(ctx context.Context, prefix string) ([]crdt.Record, error)
	QueryKeys(ctx context.Context, prefix string, keep func(key string) bool) ([]crdt.Record, error)
}

var (
	_ StakeReader  = (*escrow.Client)(nil)
	_ RecordReader = (*crdt.Store)(nil)
)

// ErrInvalidConfig wraps every configuration error of the package.
var ErrInvalidConfig = errors.New("meshview: invalid config")

// Advertised is one processor's advertisement as dispatching reads it.
type Advertised struct {
	// PeerID is the processor's libp2p peer ID (the record's author).
	PeerID string
	// CardModel and VRAMMiB are its hardware grade.
	CardModel string
	VRAMMiB   uint64
	// Models are the model IDs on its disk.
	Models []string
	// Wallet is its EVM address ("" when it has none).
	Wallet string
	// Timeout is its MicroJob timeout setting (QoS timeout score).
	Timeout time.Duration
	// Updated is when it last refreshed the advertisement.
	Updated time.Time
	// Started is when the processor last started (zero when its
	// advertisement does not say): a kicked processor that started again
	// after its kick rejoins (see Rejoins).
	Started time.Time
}

// FactsConfig tunes Facts.
type FactsConfig struct {
	// Dispatch are the mesh's dispatching and QoS parameters. Default
	// dispatch.DefaultConfig().
	Dispatch dispatch.Config
	// AdvertTTL: a processor is live while its advertisement is younger.
	// Default 30m.
	AdvertTTL time.Duration
	// StakeTTL is how long a stake read from the chain is reused. Default
	// 5m.
	StakeTTL time.Duration
	// HistoryJobs is how many finished jobs, the latest by the ordering
	// rule of docs/PROTOCOL.md, the QoS ledger replays. Default 256.
	HistoryJobs int
	// Probes is the probe schedule whose finished probes the QoS ledger
	// replays with the jobs (probe.Config; Window 0: none). Default
	// probe.DefaultConfig().
	Probes probe.Config
}

// DefaultFactsConfig returns the defaults documented on FactsConfig.
func DefaultFactsConfig() FactsConfig {
	return FactsConfig{Dispatch: dispatch.DefaultConfig(), AdvertTTL: 30 * time.Minute, StakeTTL: 5 * time.Minute, HistoryJobs: 256, Probes: probe.DefaultConfig()}
}

// Validate checks the config.
func (c FactsConfig) Validate() error {
	if err := c.Dispatch.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if c.AdvertTTL <= 0 || c.StakeTTL <= 0 || c.HistoryJobs < 1 {
		return fmt.Errorf("%w: facts TTLs and history must be positive", ErrInvalidConfig)
	}
	if err := c.Probes.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return nil
}

// FactsParams are what Facts reads.
type FactsParams struct {
	// Store holds the job records (commitments, disclosures, verdicts).
	// Required.
	Store RecordReader
	// Directory lists the advertised processors. Nil: no processor is
	// known, every view is empty.
	Directory Directory
	// Stakes reads stakes from the escrow. Nil (no chain): every
	// processor has stake 1.
	Stakes StakeReader
	// Blocks reads out-of-line verdict bodies (LoadVerdictRecord). Nil:
	// a job whose verdict is in a body falls back to the record-order
	// rule, as a verdict without rounds does.
	Blocks records.BodyReader
	// Settlements reads releases from the escrow. Set (a mesh with a
	// chain): the QoS ledger replays settled jobs from their outcome
	// summaries checked against the chain (settledJobs), so every node
	// replays the same tasks whether or not it holds the jobs' records.
	// Nil: it replays the finished jobs' verdicts (finishedJobs).
	Settlements Settlements
	// Rules are how a finished job's verdict is read (finish.Rules): with
	// a chain the processors' (membership.ReaderRules). Zero: every
	// disclosure counts and candidates are the advertised processors.
	Rules finish.Rules
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Now defaults to time.Now; tests inject a clock.
	Now func() time.Time
}

// Facts derives what dispatching needs from the replicated state: the live
// processors and their grades from their advertisements, their stakes from
// the escrow, and their QoS from a dispatch.Ledger that replays the
// commitment and disclosure records of finished jobs. Safe for concurrent
// use.
type Facts struct {
	cfg FactsConfig
	p   FactsParams
	log *slog.Logger

	mu     sync.Mutex
	stakes map[string]cachedStake
	// named holds, for a StakeTTL, the processors a finished job's
	// verdict named culprits: their stakes are read afresh, not from the
	// cache, since the job's settlement slashes them.
	named map[string]time.Time
	// done caches the derived outcomes of finished jobs.
	done map[jobs.ID]*finishedJob
	// retry holds when a job whose summary did not check is read again.
	retry map[jobs.ID]time.Time
	// expect caches the probes' expected answers.
	expect probe.Expectations
}

type cachedStake struct {
	amount *big.Int
	at     time.Time
}

// NewFacts returns a Facts over p.
func NewFacts(p FactsParams, cfg FactsConfig) (*Facts, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if p.Store == nil {
		return nil, fmt.Errorf("%w: facts need a store", ErrInvalidConfig)
	}
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	return &Facts{cfg: cfg, p: p, log: p.Logger, stakes: map[string]cachedStake{}, named: map[string]time.Time{}, done: map[jobs.ID]*finishedJob{}, retry: map[jobs.ID]time.Time{}}, nil
}

// ProcessorView is one live processor as dispatching weighs it.
type ProcessorView struct {
	// Node is the processor's grade, stake and QoS score Q.
	dispatch.Node
	// Wallet is its advertised EVM address.
	Wallet string
	// Timeout is its advertised timeout setting.
	Timeout time.Duration
	// Scores are its QoS component scores (R, P, B and Q).
	Scores dispatch.QoSScore
	// SpeedScore is its node score ns (mean task score).
	SpeedScore float64
	// SpeedAt is when its latest scored task (job or probe) ended in the
	// replay; zero when SpeedScore is the new-node score.
	SpeedAt time.Time
	// Timeouts is how many of its last View.TimeoutWindow tasks timed
	// out (dispatch.Ledger.Timeouts).
	Timeouts int
	// Weight is its job-independent selection weight W = S·Q/(S+Q)
	// among the live processors (no locality boost), 0 when kicked out;
	// View.JobWeights gives a job's weights.
	Weight float64
	// Kick is set when the QoS ledger kicked it out.
	Kick *dispatch.Kick
}

// View is a snapshot of the live processors, sorted by peer ID.
type View struct {
	// At is when the snapshot was taken.
	At time.Time
	// Processors are the live processors.
	Processors []ProcessorView
	// Tasks is how many task outcomes the QoS ledger replayed.
	Tasks int
	// TimeoutWindow is how many recent tasks a processor's Timeouts
	// count (dispatch.Config.KickTimeoutWindow).
	TimeoutWindow int

	byID  map[string]int
	kicks map[string]dispatch.Kick
	// settled are the jobs with an outcome summary checked against the
	// chain (Facts.settledJobs); nil without a chain.
	settled map[jobs.ID]bool
	// jobs caches per-job weights and pre-download names (jobweights.go);
	// nil in views written as literals, which then compute them every time.
	jobs *jobCache
}

// Live is the number of live processors.
func (v *View) Live() int {
	if v == nil {
		return 0
	}
	return len(v.Processors)
}

// Processor returns a live processor's view.
func (v *View) Processor(id string) (ProcessorView, bool) {
	if v == nil {
		return ProcessorView{}, false
	}
	i, ok := v.byID[id]
	if !ok {
		return ProcessorView{}, false
	}
	return v.Processors[i], true
}

// Weight is a processor's selection weight: 0 when it is kicked out or
// not live.
func (v *View) Weight(id string) float64 {
	p, ok := v.Processor(id)
	if !ok {
		return 0
	}
	return p.Weight
}

// Kicked reports whether the QoS ledger kicked a processor out (live or
// not).
func (v *View) Kicked(id string) bool {
	if v == nil {
		return false
	}
	_, ok := v.kicks[id]
	return ok
}

// Nodes returns the live processors as dispatch nodes.
func (v *View) Nodes() []dispatch.Node {
	if v == nil {
		return nil
	}
	out := make([]dispatch.Node, len(v.Processors))
	for i, p := range v.Processors {
		out[i] = p.Node
	}
	return out
}

// NewView returns a view of procs, as of at, sorted by peer ID. kicks are
// the processors the QoS ledger kicked out, live or not: a live one named
// there gets its Kick set and weighs 0, and a processor whose Kick is set
// counts as kicked out. Facts builds its views with it; a view built by
// hand (a node without Facts, a test) is one too.
func NewView(at time.Time, procs []ProcessorView, kicks ...dispatch.Kick) *View {
	v := &View{At: at, Processors: slices.Clone(procs), byID: map[string]int{}, kicks: map[string]dispatch.Kick{}, jobs: newJobCache()}
	slices.SortFunc(v.Processors, func(a, b ProcessorView) int { return cmp.Compare(a.ID, b.ID) })
	for _, k := range kicks {
		v.kicks[k.Node] = k
	}
	for i := range v.Processors {
		p := &v.Processors[i]
		v.byID[p.ID] = i
		if k, ok := v.kicks[p.ID]; ok {
			p.Kick, p.Weight = &k, 0
		} else if p.Kick != nil {
			v.kicks[p.ID] = *p.Kick
		}
	}
	return v
}

// Settled reports whether job id is settled on chain, as its outcome
// summary in the mesh store, checked against the chain, says: over for
// every node, whether or not it holds the job's records. Always false
// without a chain.
func (v *View) Settled(id jobs.ID) bool {
	return v != nil && v.settled[id]
}

// KickOf returns the QoS ledger's kick of a processor (live or not); false
// when it is not kicked out.
func (v *View) KickOf(id string) (dispatch.Kick, bool) {
	if v == nil {
		return dispatch.Kick{}, false
	}
	k, ok := v.kicks[id]
	return k, ok
}

// View reads the replicated state and returns the live processors with
// their weights. Without FactsParams.Settlements, ids are the jobs known
// to have a verdict, whose rounds feed the QoS ledger; with them, ids are
// the jobs that may be settled (every job the caller knows, or
// SummarizedJobs), and the settled ones' checked summaries feed it.
func (f *Facts) View(ctx context.Context, ids []jobs.ID) (*View, error) {
	now := f.p.Now()
	var ads []Advertised
	if f.p.Directory != nil {
		var err error
		if ads, err = f.p.Directory.Processors(ctx); err != nil {
			return nil, fmt.Errorf("meshview: reading advertisements: %w", err)
		}
	}
	var done []*finishedJob
	var err error
	if f.p.Settlements != nil {
		done, err = f.settledJobs(ctx, ids)
	} else {
		done, err = f.finishedJobs(ctx, ids)
	}
	if err != nil {
		return nil, err
	}
	started := make(map[string]time.Time, len(ads))
	for _, a := range ads {
		if a.Started.After(started[a.PeerID]) {
			started[a.PeerID] = a.Started
		}
	}
	probes, err := f.probeTasks(ctx, now, ads)
	if err != nil {
		return nil, err
	}
	r, err := replay(f.cfg.Dispatch, replayOrder(done, probes), started)
	if err != nil {
		return nil, err
	}
	ledger, kicks := r.ledger, r.kicks
	var procs []ProcessorView
	var in []dispatch.QoSInput
	seen := map[string]bool{}
	for _, a := range ads {
		if !AdvertLive(a.Updated, now, f.cfg.AdvertTTL) {
			continue
		}
		if seen[a.PeerID] || a.PeerID == "" {
			continue
		}
		seen[a.PeerID] = true
		procs = append(procs, ProcessorView{
			Node:    dispatch.Node{ID: a.PeerID, CardModel: a.CardModel, VRAM: a.VRAMMiB, Stake: f.stake(ctx, a.Wallet, now, f.wasNamed(a.PeerID, now)), LocalModels: slices.Clone(a.Models)},
			Wallet:  a.Wallet,
			Timeout: a.Timeout,
		})
		in = append(in, dispatch.QoSInput{ID: a.PeerID, VRAM: a.VRAMMiB, Timeout: a.Timeout})
	}
	slices.SortFunc(procs, func(a, b ProcessorView) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(in, func(a, b dispatch.QoSInput) int { return cmp.Compare(a.ID, b.ID) })
	scores, err := ledger.QoSScores(in)
	if err != nil {
		return nil, err
	}
	nodes := make([]dispatch.Node, len(procs))
	for i := range procs {
		p := &procs[i]
		p.Scores = scores[i]
		p.QoS = scores[i].Q
		p.SpeedScore = ledger.NodeScore(p.ID)
		p.Timeouts = ledger.Timeouts(p.ID)
		p.SpeedAt = r.speedAt[p.ID]
		nodes[i] = p.Node
	}
	weights := dispatch.Weights(dispatch.Job{}, nodes)
	for i := range procs {
		procs[i].Weight = weights[i]
	}
	v := NewView(now, procs, slices.Collect(maps.Values(kicks))...)
	v.Tasks, v.TimeoutWindow = r.tasks, f.cfg.Dispatch.KickTimeoutWindow
	if f.p.Settlements != nil {
		f.mu.Lock()
		v.settled = make(map[jobs.ID]bool, len(f.done))
		for id := range f.done {
			v.settled[id] = true
		}
		f.mu.Unlock()
	}
	return v, nil
}

// stake is a wallet's active stake: 1 without a chain, 0 without a
// wallet, else the escrow's figure, cached for StakeTTL unless fresh
// asks for a new read. A failed read keeps the last figure (0 if there is
// none).
func (f *Facts) stake(ctx context.Context, wallet string, now time.Time, fresh bool) *big.Int {
	if f.p.Stakes == nil {
		return big.NewInt(1)
	}
	if !common.IsHexAddress(wallet) {
		return new(big.Int)
	}
	f.mu.Lock()
	c, ok := f.stakes[wallet]
	f.mu.Unlock()
	if ok && now.Sub(c.at) < f.cfg.StakeTTL && !fresh {
		return c.amount
	}
	s, err := f.p.Stakes.StakeOf(ctx, common.HexToAddress(wallet))
	if err != nil || s.Active == nil {
		f.log.Warn("reading a processor's stake", "wallet", wallet, "err", err)
		if ok {
			return c.amount
		}
		return new(big.Int)
	}
	f.mu.Lock()
	f.stakes[wallet] = cachedStake{amount: s.Active, at: now}
	f.mu.Unlock()
	return s.Active
}

// wasNamed reports whether a finished job named processor p culprit
// within the last StakeTTL.
func (f *Facts) wasNamed(p string, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	until, ok := f.named[p]
	if ok && !now.Before(until) {
		delete(f.named, p)
		return false
	}
	return ok
}

// finishedJob is what the records of one job with a verdict, or its
// checked summary, say.
type finishedJob struct {
	id jobs.ID
	// at orders the job in the replay: its verdict record's seq, or its
	// release block's time.
	at    time.Time
	tasks []dispatch.TaskOutcome
}

// finishedJobs returns the latest HistoryJobs finished jobs in replay
// order (docs/PROTOCOL.md): jobs by (verdict record seq, job ID), each
// with its MacroJobs' task outcomes by index. A job's outcomes are derived
// once, when it is first seen finished, and cached.
func (f *Facts) finishedJobs(ctx context.Context, finished []jobs.ID) ([]*finishedJob, error) {
	var done []*finishedJob
	for _, id := range finished {
		f.mu.Lock()
		j := f.done[id]
		f.mu.Unlock()
		if j == nil {
			var err error
			if j, err = f.derive(ctx, id); err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				continue // no verdict readable yet; next time
			}
			f.mu.Lock()
			f.done[id] = j
			f.mu.Unlock()
		}
		done = append(done, j)
	}
	return f.latest(done), nil
}

// latest sorts done in replay order (at, then job ID) and keeps the
// last HistoryJobs.
func (f *Facts) latest(done []*finishedJob) []*finishedJob {
	slices.SortFunc(done, func(a, b *finishedJob) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return compareIDs(a.id, b.id)
	})
	if len(done) > f.cfg.HistoryJobs {
		done = done[len(done)-f.cfg.HistoryJobs:]
	}
	return done
}

// noteCulprits marks culprits as named by a finished job for a StakeTTL
// (wasNamed): their stakes are read afresh.
func (f *Facts) noteCulprits(culprits []string) {
	if len(culprits) == 0 {
		return
	}
	until := f.p.Now().Add(f.cfg.StakeTTL)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range culprits {
		f.named[c] = until
	}
}

// derive reads one finished job's records. Each MacroJob is one task,
// its rounds as the verdict that counts (ReadVerdict) lists them
// (RoundOrder; the finalizer fixed them, so every node replays the same
// order); a job without such a verdict yet is an error, derived again on
// a later refresh. A verdict record without rounds (a body record read
// without a block layer) falls back to the same rule over the records
// this node holds: a MacroJob's assigned processors are those that
// committed one of its MicroJobs or wrote a took record in it, a round's
// order is by each processor's earliest record in it (record seq, then
// peer ID). An assigned processor that never disclosed timed out. A
// verdict kept in a body is read through FactsParams.Blocks; a body no
// peer serves yet is an error, so the job is derived again on a later
// refresh.
func (f *Facts) derive(ctx context.Context, id jobs.ID) (*finishedJob, error) {
	chosen, err := finish.ReadVerdictBy(ctx, f.p.Store, f.p.Blocks, id, nil, f.p.Rules)
	if errors.Is(err, records.ErrBodyUnavailable) {
		// Not readable yet (no peer served the body in time): try again
		// on a later refresh rather than fix a different order.
		f.log.Warn("verdict body unavailable", "job", id, "err", err)
		return nil, err
	}
	if err != nil {
		return nil, err // no verdict that counts yet: next time
	}
	j := &finishedJob{id: id, at: time.Unix(0, int64(chosen.Seq))}
	f.noteCulprits(chosen.Record.Culprits)
	if rec := chosen.Record; len(rec.Rounds) > 0 {
		for _, r := range rec.Rounds {
			j.tasks = append(j.tasks, finish.TaskOutcome(id, r))
		}
		return j, nil
	}
	recs, err := f.p.Store.Query(ctx, records.JobKey(id)+"/")
	if err != nil {
		return nil, err
	}
	var s finish.RoundSeqs
	for _, r := range recs {
		if r.Tombstone {
			continue
		}
		author := r.AuthorText()
		switch r.Type {
		case records.CommitType:
			if c, err := records.OpenCommitment(r.Key, author, r.Payload); err == nil && c.JobID == id {
				s.Commit(c.MacroIndex, author, r.Seq)
			}
		case records.ResultType:
			if d, err := records.OpenDisclosure(r.Key, author, r.Payload); err == nil && d.JobID == id {
				s.Disclose(d.MacroIndex, author, r.Seq)
			}
		case records.TookType:
			if t := finish.OpenPart(id, r).Took; t != nil {
				s.Took(t.Macro, t.Processor, t.Seq)
			}
		}
	}
	for _, r := range s.Orders() {
		j.tasks = append(j.tasks, finish.TaskOutcome(id, r))
	}
	return j, nil
}

// AdvertLive reports whether an advertisement refreshed at updated
// counts as live at now: no older than ttl, and no further ahead than
// ttl either (a clock set forward, or a lie, does not stay live for
// ever).
func AdvertLive(updated, now time.Time, ttl time.Duration) bool {
	return now.Sub(updated) <= ttl && !updated.After(now.Add(ttl))
}
