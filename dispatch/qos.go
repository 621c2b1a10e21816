package dispatch

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// MaxTaskProcessors bounds the processors of one TaskOutcome.
const MaxTaskProcessors = 64

// TaskOutcome is what the replicated records say about one finished task:
// who was assigned, and the order of their commitment and disclosure
// records (seed 003's two submission rounds). A processor that was assigned
// but never disclosed timed out.
type TaskOutcome struct {
	// TaskID names the task (a MicroJob ID, or a job ID).
	TaskID string
	// Assigned are the processors the task was given to.
	Assigned []string
	// Commits are the processors in commitment order, earliest first.
	Commits []string
	// Disclosures are the processors in disclosure order, earliest first.
	Disclosures []string
}

// Validate checks that the rounds only name assigned processors, once each,
// and that nobody disclosed without committing.
func (o TaskOutcome) Validate() error {
	if o.TaskID == "" || len(o.TaskID) > MaxIDLen {
		return fmt.Errorf("%w: task id length %d", ErrBadOutcome, len(o.TaskID))
	}
	if len(o.Assigned) == 0 || len(o.Assigned) > MaxTaskProcessors {
		return fmt.Errorf("%w %s: %d assigned processors, want 1 to %d", ErrBadOutcome, o.TaskID, len(o.Assigned), MaxTaskProcessors)
	}
	assigned := make(map[string]struct{}, len(o.Assigned))
	for _, id := range o.Assigned {
		if id == "" || len(id) > MaxIDLen {
			return fmt.Errorf("%w %s: bad processor id", ErrBadOutcome, o.TaskID)
		}
		if _, dup := assigned[id]; dup {
			return fmt.Errorf("%w %s: %s assigned twice", ErrBadOutcome, o.TaskID, id)
		}
		assigned[id] = struct{}{}
	}
	committed := make(map[string]struct{}, len(o.Commits))
	for round, list := range [][]string{o.Commits, o.Disclosures} {
		seen := make(map[string]struct{}, len(list))
		for _, id := range list {
			if _, ok := assigned[id]; !ok {
				return fmt.Errorf("%w %s: %s submitted but was not assigned", ErrBadOutcome, o.TaskID, id)
			}
			if _, dup := seen[id]; dup {
				return fmt.Errorf("%w %s: %s submitted twice in one round", ErrBadOutcome, o.TaskID, id)
			}
			seen[id] = struct{}{}
			if round == 0 {
				committed[id] = struct{}{}
			} else if _, ok := committed[id]; !ok {
				return fmt.Errorf("%w %s: %s disclosed without a commitment", ErrBadOutcome, o.TaskID, id)
			}
		}
	}
	return nil
}

// Scored reports whether the task counts for submission speed: seed 003
// ignores a task nobody submitted to (it is likely misconfigured).
func (o TaskOutcome) Scored() bool { return len(o.Commits)+len(o.Disclosures) > 0 }

// RoundScore is the points for submitting at position pos (0 = first) in a
// round: cfg.RoundScores[pos], or 0 past the end of the table.
func RoundScore(cfg Config, pos int) uint32 {
	if pos < 0 || pos >= len(cfg.RoundScores) {
		return 0
	}
	return cfg.RoundScores[pos]
}

// TaskScores returns each assigned processor's task score ts = rs_c + rs_d
// (seed 003), in the order of o.Assigned. A processor missing from a round
// gets 0 for it.
func TaskScores(cfg Config, o TaskOutcome) ([]uint32, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	pos := func(list []string, id string) int {
		if i := slices.Index(list, id); i >= 0 {
			return i
		}
		return math.MaxInt
	}
	out := make([]uint32, len(o.Assigned))
	for i, id := range o.Assigned {
		out[i] = RoundScore(cfg, pos(o.Commits, id)) + RoundScore(cfg, pos(o.Disclosures, id))
	}
	return out, nil
}

// KickReason says why a processor was kicked out.
type KickReason string

const (
	// KickTimeouts: KickTimeouts of the last KickTimeoutWindow tasks timed
	// out.
	KickTimeouts KickReason = "timeouts"
	// KickLowScore: the short-term mean task score stayed below
	// KickScoreThreshold for KickLowStreak tasks in a row.
	KickLowScore KickReason = "low-score"
)

// Kick reports a processor the mesh should stop giving work to: its
// requests are ignored until it rejoins.
type Kick struct {
	// Node is the processor ID.
	Node string
	// Reason says which rule fired.
	Reason KickReason
	// TaskID is the task whose outcome triggered it.
	TaskID string
	// At is when the kick took effect: the mesh's replay sets it to the
	// verdict time of the job whose outcome triggered it, which every
	// node reads alike. Ledger.Record keeps no clock and leaves it zero.
	At time.Time
}

// Ledger accumulates task outcomes into per-processor QoS history: the
// submission-speed window, recent timeouts and the low-score streak. Every
// node that records the same outcomes in the same order (the order of the
// replicated log, e.g. by finalization) holds the same ledger. Not safe for
// concurrent use.
type Ledger struct {
	cfg   Config
	nodes map[string]*history
}

type history struct {
	scores    []uint32 // last ScoreWindow scored tasks
	recent    []uint32 // last KickScoreWindow scored tasks
	timeouts  []bool   // last KickTimeoutWindow tasks
	lowStreak int
	kicked    *Kick
}

// NewLedger returns an empty ledger.
func NewLedger(cfg Config) (*Ledger, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Ledger{cfg: cfg, nodes: make(map[string]*history)}, nil
}

func pushWindow[T any](w []T, x T, size int) []T {
	w = append(w, x)
	if len(w) > size {
		w = slices.Delete(w, 0, len(w)-size)
	}
	return w
}

// Record applies one task outcome and returns the processors it newly
// kicks out, sorted by ID. A bad outcome changes nothing, and neither does
// a task nobody submitted to: seed 003 ignores it (it is likely
// misconfigured), so it counts as a timeout for no one.
func (l *Ledger) Record(o TaskOutcome) ([]Kick, error) {
	scores, err := TaskScores(l.cfg, o)
	if err != nil {
		return nil, err
	}
	if !o.Scored() {
		return nil, nil
	}
	order := make([]int, len(o.Assigned))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(o.Assigned[a], o.Assigned[b]) })
	var kicks []Kick
	for _, i := range order {
		id := o.Assigned[i]
		h := l.nodes[id]
		if h == nil {
			h = &history{}
			l.nodes[id] = h
		}
		timedOut := !slices.Contains(o.Disclosures, id)
		h.timeouts = pushWindow(h.timeouts, timedOut, l.cfg.KickTimeoutWindow)
		h.scores = pushWindow(h.scores, scores[i], l.cfg.ScoreWindow)
		h.recent = pushWindow(h.recent, scores[i], l.cfg.KickScoreWindow)
		var sum uint64
		for _, s := range h.recent {
			sum += uint64(s)
		}
		// mean < threshold, exactly: sum < threshold·n.
		if sum < uint64(l.cfg.KickScoreThreshold)*uint64(len(h.recent)) {
			h.lowStreak++
		} else {
			h.lowStreak = 0
		}
		if h.kicked != nil {
			continue
		}
		var reason KickReason
		switch {
		case countTrue(h.timeouts) >= l.cfg.KickTimeouts:
			reason = KickTimeouts
		case h.lowStreak >= l.cfg.KickLowStreak:
			reason = KickLowScore
		default:
			continue
		}
		k := Kick{Node: id, Reason: reason, TaskID: o.TaskID}
		h.kicked = &k
		kicks = append(kicks, k)
	}
	return kicks, nil
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// Kicked reports whether a processor is kicked out, and why.
func (l *Ledger) Kicked(id string) (Kick, bool) {
	if h := l.nodes[id]; h != nil && h.kicked != nil {
		return *h.kicked, true
	}
	return Kick{}, false
}

// Rejoin clears a processor's history, kick included: it joined again
// (the mesh's replay calls it when a kicked processor advertises a start
// after its kick), and only what it does from now on counts.
func (l *Ledger) Rejoin(id string) { delete(l.nodes, id) }

// Timeouts is how many of a processor's last KickTimeoutWindow tasks
// timed out: the count the KickTimeouts rule reads.
func (l *Ledger) Timeouts(id string) int {
	if h := l.nodes[id]; h != nil {
		return countTrue(h.timeouts)
	}
	return 0
}

// NodeScore is ns_i, the mean task score over the last ScoreWindow scored
// tasks (seed 003), or NewNodeTaskScore for a processor without one.
func (l *Ledger) NodeScore(id string) float64 {
	h := l.nodes[id]
	if h == nil || len(h.scores) == 0 {
		return float64(l.cfg.NewNodeTaskScore)
	}
	var sum uint64
	for _, s := range h.scores {
		sum += uint64(s)
	}
	return float64(sum) / float64(len(h.scores))
}

// QoSInput is one processor's raw QoS facts.
type QoSInput struct {
	// ID is the processor ID.
	ID string
	// VRAM is the card memory in MiB.
	VRAM uint64
	// Timeout is the processor's timeout setting O_i.
	Timeout time.Duration
	// Speed is the node score ns_i (Ledger.NodeScore).
	Speed float64
}

// QoSScore holds a processor's normalised scores, each in [0, 1].
type QoSScore struct {
	// ID is the processor ID.
	ID string
	// R is the VRAM score V_i / max V.
	R float64
	// P is the timeout score (max O − O_i)/(max O − O_min).
	P float64
	// B is the submission speed score ns_i / max ns.
	B float64
	// Q is the combined score fed to the selection weight.
	Q float64
}

// QoSScores normalises the facts of the given processors (the network)
// against their maxima and combines them (seed 003):
//
//	R_i = V_i / max V_j               (0 when every V is 0)
//	P_i = (max O_j − O_i)/(max O_j − O_min)   (1 when max O_j ≤ O_min;
//	                                            O_i below O_min counts as O_min)
//	B_i = ns_i / max ns_j             (0 when every ns is 0)
//	Q_i = (wB·B_i + wR·R_i + wP·P_i)/(wB + wR + wP)
//
// Each product is rounded on its own (explicit conversions keep the
// compiler from fusing them), so Q is the same on every machine.
func QoSScores(cfg Config, in []QoSInput) ([]QoSScore, error) {
	var maxV uint64
	var maxO time.Duration
	var maxB float64
	for _, x := range in {
		if math.IsNaN(x.Speed) || math.IsInf(x.Speed, 0) || x.Speed < 0 || x.Timeout < 0 {
			return nil, fmt.Errorf("%w: QoS input of %s out of range", ErrInvalidNode, x.ID)
		}
		maxV, maxO, maxB = max(maxV, x.VRAM), max(maxO, x.Timeout), max(maxB, x.Speed)
	}
	wB, wR, wP := float64(cfg.SpeedWeight), float64(cfg.VRAMWeight), float64(cfg.TimeoutWeight)
	wSum := wB + wR + wP
	out := make([]QoSScore, len(in))
	for i, x := range in {
		s := QoSScore{ID: x.ID, P: 1}
		if maxV > 0 {
			s.R = float64(x.VRAM) / float64(maxV)
		}
		if maxB > 0 {
			s.B = x.Speed / maxB
		}
		if span := maxO - cfg.MinTimeout; span > 0 {
			o := max(x.Timeout, cfg.MinTimeout)
			s.P = float64(maxO-o) / float64(span)
		}
		sum := float64(wB*s.B) + float64(wR*s.R) + float64(wP*s.P)
		s.Q = min(sum/wSum, 1)
		out[i] = s
	}
	return out, nil
}

// QoSScores is QoSScores with each input's Speed taken from the ledger's
// NodeScore, so the caller passes only hardware facts and timeout settings.
func (l *Ledger) QoSScores(in []QoSInput) ([]QoSScore, error) {
	filled := slices.Clone(in)
	for i := range filled {
		filled[i].Speed = l.NodeScore(filled[i].ID)
	}
	return QoSScores(l.cfg, filled)
}
