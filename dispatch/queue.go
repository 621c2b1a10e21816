package dispatch

import (
	"cmp"
	"fmt"
	"math/big"
	"slices"
)

// AnyModel names the queue group of jobs that do not require a GPU model.
const AnyModel = "Any"

// Queue holds open jobs that found no free processor, grouped by (MinVRAM,
// required GPU model or "Any", replicas) as seed 001 groups them, each group
// a heap ordered by task value. Order: higher price/estimated-time first,
// compared exactly as price_a·est_b vs price_b·est_a, then the smaller job ID.
// A second heap holds the reverse order for eviction. The cap α·N is
// counted in processor slots, as N counts processors: a job waits for
// Replicas of them (seed 000's GPT task holds 3 nodes), so it counts
// Replicas times (a jobmesh choice where the seeds are silent). Every
// operation is O(log n) in the number of jobs, or O(groups) for Next. A
// Queue is not safe for concurrent use.
type Queue struct {
	cfg     Config
	jobs    map[string]*queued
	groups  map[queueKey]*jobGroup
	byModel map[string][]*jobGroup // "" = Any; sorted by VRAM, then replicas
	evict   ixheap                 // worst job on top
	slots   int                    // sum of the queued jobs' replicas
	x, y    big.Int                // scratch for comparisons
}

type queueKey struct {
	vram     uint64
	model    string // "" for Any
	replicas int
}

type jobGroup struct {
	key  queueKey
	heap ixheap // best job on top
}

type queued struct {
	job Job
	est big.Int // estimated time in ns
	gix int     // index in the group heap
	eix int     // index in the eviction heap
	grp *jobGroup
}

// NewQueue returns an empty queue.
func NewQueue(cfg Config) (*Queue, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	q := &Queue{cfg: cfg, jobs: make(map[string]*queued), groups: make(map[queueKey]*jobGroup), byModel: make(map[string][]*jobGroup)}
	q.evict = ixheap{less: func(a, b *queued) bool { return q.better(b, a) }, slot: func(e *queued) *int { return &e.eix }}
	return q, nil
}

// better reports whether a comes before b in the queue order.
func (q *Queue) better(a, b *queued) bool {
	q.x.Mul(a.job.Price, &b.est)
	q.y.Mul(b.job.Price, &a.est)
	if c := q.x.Cmp(&q.y); c != 0 {
		return c > 0
	}
	return a.job.ID < b.job.ID
}

// Less reports whether job a comes before job b in the queue order under
// cfg (higher task value first, then the smaller ID).
func Less(cfg Config, a, b Job) (bool, error) {
	q, err := NewQueue(cfg)
	if err != nil {
		return false, err
	}
	qa, err := q.entry(a)
	if err != nil {
		return false, err
	}
	qb, err := q.entry(b)
	if err != nil {
		return false, err
	}
	return q.better(qa, qb), nil
}

func (q *Queue) entry(j Job) (*queued, error) {
	if err := j.Validate(q.cfg); err != nil {
		return nil, err
	}
	est, _ := EstimatedTime(q.cfg, j.Units)
	e := &queued{job: j}
	e.est.SetInt64(int64(est))
	return e, nil
}

// Len is the number of queued jobs.
func (q *Queue) Len() int { return len(q.jobs) }

// Has reports whether a job is queued.
func (q *Queue) Has(id string) bool { _, ok := q.jobs[id]; return ok }

// Push queues a job. It does not enforce the cap: call Trim.
func (q *Queue) Push(j Job) error {
	if _, ok := q.jobs[j.ID]; ok {
		return fmt.Errorf("%w: job %s already queued", ErrDuplicate, j.ID)
	}
	e, err := q.entry(j)
	if err != nil {
		return err
	}
	k := queueKey{vram: j.MinVRAM, model: j.GPUModel, replicas: j.replicas()}
	g, ok := q.groups[k]
	if !ok {
		g = &jobGroup{key: k, heap: ixheap{less: q.better, slot: func(e *queued) *int { return &e.gix }}}
		q.groups[k] = g
		list := q.byModel[k.model]
		i, _ := slices.BinarySearchFunc(list, k, func(a *jobGroup, k queueKey) int {
			if c := cmp.Compare(a.key.vram, k.vram); c != 0 {
				return c
			}
			return cmp.Compare(a.key.replicas, k.replicas)
		})
		q.byModel[k.model] = slices.Insert(list, i, g)
	}
	e.grp = g
	g.heap.push(e)
	q.evict.push(e)
	q.jobs[j.ID] = e
	q.slots += j.replicas()
	return nil
}

// Remove takes a job out of the queue (cancelled, or dispatched elsewhere).
func (q *Queue) Remove(id string) (Job, bool) {
	e, ok := q.jobs[id]
	if !ok {
		return Job{}, false
	}
	q.drop(e)
	return e.job, true
}

func (q *Queue) drop(e *queued) {
	g := e.grp
	g.heap.remove(e.gix)
	q.evict.remove(e.eix)
	delete(q.jobs, e.job.ID)
	q.slots -= e.job.replicas()
	if g.heap.len() == 0 {
		delete(q.groups, g.key)
		list := slices.DeleteFunc(q.byModel[g.key.model], func(x *jobGroup) bool { return x == g })
		if len(list) == 0 {
			delete(q.byModel, g.key.model)
		} else {
			q.byModel[g.key.model] = list
		}
	}
}

// Slots is the number of processors the queued jobs wait for: each job
// counts its Replicas. The cap bounds it.
func (q *Queue) Slots() int { return q.slots }

// Cap is the queue size cap max(⌊α·live⌋, MinQueueLen) in processor slots
// (seeds 000/001; Slots).
func (q *Queue) Cap(live int) int { return q.cfg.queueCap(live) }

// Trim evicts the lowest-value jobs until the queue's Slots fit Cap(live)
// and returns them, worst first: a replicated job counts once per replica,
// and one that needs more slots than the cap is evicted. The caller
// aborts each one (JobAborted record, refund through the escrow's abort).
func (q *Queue) Trim(live int) []Job {
	limit := q.Cap(live)
	var out []Job
	for q.slots > limit {
		e := q.evict.items[0]
		q.drop(e)
		out = append(out, e.job)
	}
	return out
}

// GroupCheck reports whether model has at least r free processors with
// VRAM ≥ vram, counting the newly free one; it gates jobs with Replicas > 1.
type GroupCheck func(model string, vram uint64, r int) bool

// Best returns the best job that node can serve without removing it: the
// heads of the node's GPU model groups and of the "Any" groups with MinVRAM
// ≤ node.VRAM are compared, and a group needing R > 1 replicas counts only
// when canGroup says R free processors of the node's model are available
// (seed 001 dequeue; seed 000 best combination).
func (q *Queue) Best(node Node, canGroup GroupCheck) (Job, bool) {
	var best *queued
	models := []string{""}
	if node.CardModel != "" {
		models = append(models, node.CardModel)
	}
	for _, model := range models {
		for _, g := range q.byModel[model] {
			if g.key.vram > node.VRAM {
				break
			}
			head := g.heap.items[0]
			if best != nil && !q.better(head, best) {
				continue
			}
			if g.key.replicas > 1 && (canGroup == nil || !canGroup(node.CardModel, g.key.vram, g.key.replicas)) {
				continue
			}
			best = head
		}
	}
	if best == nil {
		return Job{}, false
	}
	return best.job, true
}

// Next removes and returns the job Best chooses.
func (q *Queue) Next(node Node, canGroup GroupCheck) (Job, bool) {
	j, ok := q.Best(node, canGroup)
	if ok {
		q.Remove(j.ID)
	}
	return j, ok
}

// Jobs lists the queued jobs in queue order (for status pages and tests).
func (q *Queue) Jobs() []Job {
	es := make([]*queued, 0, len(q.jobs))
	for _, e := range q.jobs {
		es = append(es, e)
	}
	slices.SortFunc(es, func(a, b *queued) int {
		if q.better(a, b) {
			return -1
		}
		if q.better(b, a) {
			return 1
		}
		return 0
	})
	out := make([]Job, len(es))
	for i, e := range es {
		out[i] = e.job
	}
	return out
}

// GroupLabel is the seed 001 name of a job's queue group, e.g. "16384/Any"
// or "24576/RTX 4090", with "xR" appended for replicated jobs.
func GroupLabel(j Job) string {
	m := j.GPUModel
	if m == "" {
		m = AnyModel
	}
	if j.replicas() > 1 {
		return fmt.Sprintf("%d/%s/x%d", j.MinVRAM, m, j.replicas())
	}
	return fmt.Sprintf("%d/%s", j.MinVRAM, m)
}

// ixheap is a binary heap that records each item's position so any item
// can be removed in O(log n).
type ixheap struct {
	items []*queued
	less  func(a, b *queued) bool
	slot  func(*queued) *int
}

func (h *ixheap) len() int { return len(h.items) }

func (h *ixheap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	*h.slot(h.items[i]) = i
	*h.slot(h.items[j]) = j
}

func (h *ixheap) push(e *queued) {
	h.items = append(h.items, e)
	*h.slot(e) = len(h.items) - 1
	h.up(len(h.items) - 1)
}

func (h *ixheap) remove(i int) {
	n := len(h.items) - 1
	if i != n {
		h.swap(i, n)
	}
	h.items[n] = nil
	h.items = h.items[:n]
	if i < n {
		if !h.down(i) {
			h.up(i)
		}
	}
}

func (h *ixheap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(h.items[i], h.items[p]) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *ixheap) down(i0 int) bool {
	i, n := i0, len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && h.less(h.items[r], h.items[l]) {
			c = r
		}
		if !h.less(h.items[c], h.items[i]) {
			break
		}
		h.swap(i, c)
		i = c
	}
	return i > i0
}
