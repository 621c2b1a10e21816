package dispatch

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Pool is the graded index of live processors: card model groups split by
// VRAM, each group's members sorted by ID, plus which members are free.
// Candidate lists are built by walking the groups in (VRAM, card model)
// order and members in ID order, so every node that holds the same
// advertisements sees the same list. A Pool is not safe for concurrent use;
// its owner serialises access.
type Pool struct {
	cfg     Config
	nodes   map[string]*nodeEntry
	groups  map[groupKey]*nodeGroup
	order   []*nodeGroup            // by (VRAM, Model)
	byModel map[string][]*nodeGroup // by VRAM
	free    int

	// Scratch space reused by Select so a decision over thousands of
	// candidates does not allocate them anew.
	bufFree, bufHolders []*nodeEntry
	bufW                []float64
	bufQ                []uint64
}

type groupKey struct {
	vram  uint64
	model string
}

func (a groupKey) compare(b groupKey) int {
	if c := cmp.Compare(a.vram, b.vram); c != 0 {
		return c
	}
	return cmp.Compare(a.model, b.model)
}

type nodeGroup struct {
	key     groupKey
	members []*nodeEntry // by ID
	free    int
}

type nodeEntry struct {
	node  Node
	root  float64 // stakeRoot(node.Stake), cached: big.Int roots are slow
	local map[string]struct{}
	inUse map[string]struct{}
	free  bool
	group *nodeGroup
}

// NewPool returns an empty pool.
func NewPool(cfg Config) (*Pool, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Pool{
		cfg:     cfg,
		nodes:   make(map[string]*nodeEntry),
		groups:  make(map[groupKey]*nodeGroup),
		byModel: make(map[string][]*nodeGroup),
	}, nil
}

// Len is the number of live processors (N in the queue cap).
func (p *Pool) Len() int { return len(p.nodes) }

// FreeLen is the number of free processors.
func (p *Pool) FreeLen() int { return p.free }

// Node returns the advertisement of a live processor and whether it is free.
func (p *Pool) Node(id string) (Node, bool, bool) {
	e, ok := p.nodes[id]
	if !ok {
		return Node{}, false, false
	}
	return e.node, e.free, true
}

// Add puts a live processor into its group.
func (p *Pool) Add(n Node, free bool) error {
	if err := n.Validate(); err != nil {
		return err
	}
	if _, ok := p.nodes[n.ID]; ok {
		return fmt.Errorf("%w: node %s", ErrDuplicate, n.ID)
	}
	e := &nodeEntry{node: n, root: stakeRoot(n.Stake), local: toSet(n.LocalModels), inUse: toSet(n.InUseModels)}
	p.nodes[n.ID] = e
	p.insert(e)
	p.setFree(e, free)
	return nil
}

// Update replaces a processor's advertisement, keeping its free state.
func (p *Pool) Update(n Node) error {
	if err := n.Validate(); err != nil {
		return err
	}
	old, ok := p.nodes[n.ID]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownNode, n.ID)
	}
	free := old.free
	p.removeEntry(old)
	return p.Add(n, free)
}

// Remove takes a processor out of the pool.
func (p *Pool) Remove(id string) error {
	e, ok := p.nodes[id]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownNode, id)
	}
	p.removeEntry(e)
	return nil
}

// SetFree marks a processor free (idle) or busy.
func (p *Pool) SetFree(id string, free bool) error {
	e, ok := p.nodes[id]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownNode, id)
	}
	p.setFree(e, free)
	return nil
}

func (p *Pool) setFree(e *nodeEntry, free bool) {
	if e.free == free {
		return
	}
	e.free = free
	d := 1
	if !free {
		d = -1
	}
	e.group.free += d
	p.free += d
}

func (p *Pool) insert(e *nodeEntry) {
	k := groupKey{e.node.VRAM, e.node.CardModel}
	g, ok := p.groups[k]
	if !ok {
		g = &nodeGroup{key: k}
		p.groups[k] = g
		i, _ := slices.BinarySearchFunc(p.order, k, func(a *nodeGroup, k groupKey) int { return a.key.compare(k) })
		p.order = slices.Insert(p.order, i, g)
		bm := p.byModel[k.model]
		j, _ := slices.BinarySearchFunc(bm, k.vram, func(a *nodeGroup, v uint64) int { return cmp.Compare(a.key.vram, v) })
		p.byModel[k.model] = slices.Insert(bm, j, g)
	}
	i, _ := slices.BinarySearchFunc(g.members, e.node.ID, func(a *nodeEntry, id string) int { return cmp.Compare(a.node.ID, id) })
	g.members = slices.Insert(g.members, i, e)
	e.group = g
}

func (p *Pool) removeEntry(e *nodeEntry) {
	p.setFree(e, false)
	g := e.group
	i, _ := slices.BinarySearchFunc(g.members, e.node.ID, func(a *nodeEntry, id string) int { return cmp.Compare(a.node.ID, id) })
	g.members = slices.Delete(g.members, i, i+1)
	if len(g.members) == 0 {
		delete(p.groups, g.key)
		p.order = slices.DeleteFunc(p.order, func(x *nodeGroup) bool { return x == g })
		bm := slices.DeleteFunc(p.byModel[g.key.model], func(x *nodeGroup) bool { return x == g })
		if len(bm) == 0 {
			delete(p.byModel, g.key.model)
		} else {
			p.byModel[g.key.model] = bm
		}
	}
	delete(p.nodes, e.node.ID)
}

// eligibleGroups returns the groups that can run job in canonical order: the
// groups of its GPU model when it names one, otherwise every group; in both
// cases only groups with VRAM ≥ MinVRAM (seeds 000/001 grading).
func (p *Pool) eligibleGroups(job Job) []*nodeGroup {
	src := p.order
	if job.GPUModel != "" {
		src = p.byModel[job.GPUModel]
	}
	// Both lists are sorted by VRAM first, so the eligible groups are a tail.
	i, _ := slices.BinarySearchFunc(src, job.MinVRAM, func(g *nodeGroup, v uint64) int {
		if g.key.vram < v {
			return -1
		}
		return 1
	})
	return src[i:]
}

// Selection is the outcome of choosing processors for a job.
type Selection struct {
	// Nodes are the chosen processor IDs, Replicas of them, in draw order.
	Nodes []string
	// Candidates is the size of the pool the draw was made from.
	Candidates int
	// Narrowed is true when model locality narrowed the pool.
	Narrowed bool
	// PreDownload lists, per required model held by fewer than
	// MinModelHolders live eligible processors, the others that should
	// fetch it.
	PreDownload []PreDownload
}

// PreDownload asks processors to fetch a model ahead of demand (seed 001).
type PreDownload struct {
	// Model is the model ID.
	Model string
	// Nodes are the processors asked to download it.
	Nodes []string
}

// Select chooses the processors for job among the free eligible ones: it
// narrows the pool to processors holding all the job's models when any does
// (seed 001), weighs each by W = M·S·Q/(S+Q) with S normalised over the pool,
// and draws from the Stream of seed. A job with Replicas R > 1 first draws a
// card model with probability proportional to the total weight of its
// candidates (seed 000: fair to nodes, not to groups; models with fewer than
// R candidates are skipped), then R distinct processors of that model.
// ErrNoCandidates means the job should wait in the queue. Select does not
// change the pool.
func (p *Pool) Select(job Job, seed []byte) (Selection, error) {
	if err := job.Validate(p.cfg); err != nil {
		return Selection{}, err
	}
	req := uniq(job.Models)
	groups := p.eligibleGroups(job)
	free, holders := p.bufFree[:0], p.bufHolders[:0]
	defer func() {
		// Drop the references so removed processors can be collected.
		clear(free)
		clear(holders)
		p.bufFree, p.bufHolders = free[:0], holders[:0]
	}()
	for _, g := range groups {
		if g.free == 0 {
			continue
		}
		for _, e := range g.members {
			if !e.free {
				continue
			}
			free = append(free, e)
			if len(req) > 0 && countHeld(req, e.local) == len(req) {
				holders = append(holders, e)
			}
		}
	}
	sel := Selection{}
	pool := free
	r := job.replicas()
	if len(holders) > 0 && (r == 1 || largestModelCount(holders) >= r) {
		pool, sel.Narrowed = holders, true
	}
	draw := func(pool []*nodeEntry) ([]string, error) {
		c := NewChooser(seed)
		if r == 1 {
			return p.drawSingle(c, req, pool)
		}
		return p.drawGroup(c, req, pool, r)
	}
	nodes, err := draw(pool)
	if err != nil && sel.Narrowed && errors.Is(err, ErrNoCandidates) {
		// The holders all weigh 0 (no stake or no QoS): fall back to every
		// free candidate, as if nobody held the models.
		pool, sel.Narrowed = free, false
		nodes, err = draw(pool)
	}
	sel.Nodes, sel.Candidates = nodes, len(pool)
	if err != nil {
		return Selection{}, fmt.Errorf("job %s: %w", job.ID, err)
	}
	sel.PreDownload = p.preDownload(req, groups, seed)
	return sel, nil
}

func largestModelCount(es []*nodeEntry) int {
	counts := make(map[string]int)
	best := 0
	for _, e := range es {
		counts[e.node.CardModel]++
		best = max(best, counts[e.node.CardModel])
	}
	return best
}

// weigh returns W for each entry, S normalised over exactly these entries.
func weigh(req []string, es []*nodeEntry, withBoost bool) []float64 {
	return weighInto(nil, req, es, withBoost)
}

func weighInto(dst []float64, req []string, es []*nodeEntry, withBoost bool) []float64 {
	var top float64
	for _, e := range es {
		top = max(top, e.root)
	}
	w := slices.Grow(dst[:0], len(es))[:len(es)]
	clear(w)
	if top == 0 {
		return w
	}
	for i, e := range es {
		m := 1.0
		if withBoost {
			m = boost(len(req), countHeld(req, e.local), countHeld(req, e.inUse))
		}
		w[i] = Weight(m, e.root/top, e.node.QoS)
	}
	return w
}

func (p *Pool) drawSingle(c *Chooser, req []string, pool []*nodeEntry) ([]string, error) {
	if len(pool) == 0 {
		return nil, ErrNoCandidates
	}
	p.bufW = weighInto(p.bufW, req, pool, true)
	q, total, err := quantizeInto(p.bufQ, p.bufW)
	if err != nil {
		return nil, err
	}
	p.bufQ = q
	return []string{pool[pick(q, c.s.Uniform(total))].node.ID}, nil
}

func (p *Pool) drawGroup(c *Chooser, req []string, pool []*nodeEntry, r int) ([]string, error) {
	p.bufW = weighInto(p.bufW, req, pool, true)
	q, _, err := quantizeInto(p.bufQ, p.bufW)
	if err != nil {
		return nil, err
	}
	p.bufQ = q
	// Members per card model, in pool (canonical) order, bucketed in one
	// flat slice. Members of one graded group are adjacent, so the map is
	// consulted once per group.
	slot := make(map[string]int)
	var names []string
	var counts []int
	modelOf := make([]int32, len(pool))
	cur, curGroup := -1, (*nodeGroup)(nil)
	for i, e := range pool {
		if q[i] == 0 {
			modelOf[i] = -1
			continue
		}
		if e.group != curGroup {
			m := e.node.CardModel
			k, ok := slot[m]
			if !ok {
				k = len(names)
				slot[m] = k
				names = append(names, m)
				counts = append(counts, 0)
			}
			cur, curGroup = k, e.group
		}
		modelOf[i] = int32(cur)
		counts[cur]++
	}
	lists := make([][]int, len(names))
	flat := make([]int, 0, len(pool))
	for k, n := range counts {
		lists[k] = flat[len(flat) : len(flat) : len(flat)+n]
		flat = flat[:len(flat)+n]
	}
	for i, k := range modelOf {
		if k >= 0 {
			lists[k] = append(lists[k], i)
		}
	}
	var models []int // indices into names, by model name
	for k := range names {
		if len(lists[k]) >= r {
			models = append(models, k)
		}
	}
	if len(models) == 0 {
		return nil, fmt.Errorf("%w: no card model has %d free candidates", ErrNoCandidates, r)
	}
	slices.SortFunc(models, func(a, b int) int { return cmp.Compare(names[a], names[b]) })
	mw := make([]float64, len(models))
	for k, m := range models {
		var sum uint64
		for _, i := range lists[m] {
			sum += q[i]
		}
		mw[k] = float64(sum)
	}
	k, err := c.Choose(mw)
	if err != nil {
		return nil, err
	}
	idx := lists[models[k]]
	sub := make([]uint64, len(idx))
	var total uint64
	for j, i := range idx {
		sub[j] = q[i]
		total += q[i]
	}
	picks, err := c.chooseK(sub, total, r)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(picks))
	for j, pk := range picks {
		out[j] = pool[idx[pk]].node.ID
	}
	return out, nil
}

// preDownload names, for each required model held by fewer than
// MinModelHolders live eligible processors, that many others to fetch it,
// drawn by W with M = 1 from Seed(seed, "predownload", model).
func (p *Pool) preDownload(req []string, groups []*nodeGroup, seed []byte) []PreDownload {
	if len(req) == 0 || p.cfg.MinModelHolders == 0 {
		return nil
	}
	models := slices.Clone(req)
	slices.Sort(models)
	var out []PreDownload
	for _, m := range models {
		// Count holders first and stop at the target: the common case is a
		// well-replicated model, and it should cost little.
		holders := 0
	count:
		for _, g := range groups {
			for _, e := range g.members {
				if _, ok := e.local[m]; ok {
					if holders++; holders >= p.cfg.MinModelHolders {
						break count
					}
				}
			}
		}
		need := p.cfg.MinModelHolders - holders
		if need <= 0 {
			continue
		}
		var others []*nodeEntry
		for _, g := range groups {
			for _, e := range g.members {
				if _, ok := e.local[m]; !ok {
					others = append(others, e)
				}
			}
		}
		w := weigh(nil, others, false)
		positive := 0
		for _, x := range w {
			if x > 0 {
				positive++
			}
		}
		need = min(need, positive)
		if need == 0 {
			continue
		}
		picks, err := NewChooser(Seed(seed, []byte("predownload"), []byte(m))).ChooseK(w, need)
		if err != nil {
			continue
		}
		pd := PreDownload{Model: m}
		for _, i := range picks {
			pd.Nodes = append(pd.Nodes, others[i].node.ID)
		}
		out = append(out, pd)
	}
	return out
}

// Select is Pool.Select over a one-off pool where every node is free.
func Select(cfg Config, job Job, nodes []Node, seed []byte) (Selection, error) {
	p, err := NewPool(cfg)
	if err != nil {
		return Selection{}, err
	}
	for _, n := range nodes {
		if err := p.Add(n, true); err != nil {
			return Selection{}, err
		}
	}
	return p.Select(job, seed)
}
