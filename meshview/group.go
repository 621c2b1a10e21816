package meshview

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// Replicated group jobs (jobs.Requirements.Replicas R > 1, seed 000's
// "3 nodes of the same card model"): the first processor that takes such a
// job chooses a group of R processors of one card model and writes it
// under records.GroupKey; only the group's members open or join the job's
// rooms, and each MicroJob is run by R of them (package groupjob applies
// these rules for a processor).

// ErrNoGroup means no card model has R eligible processors: a replicated
// job waits until one has.
var ErrNoGroup = errors.New("meshview: no card model has enough processors for the group")

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
		g, err := records.DecodeGroup(info, r.Key, r.AuthorText(), r.Payload)
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
	return dispatch.Seed(info.SeedCommitment[:], id[:], []byte("group"))
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

// Replacement is the next round of group g of job info, written by
// chooser: the silent members are dropped and as many others of the
// group's card model are drawn in their place from cands (ChooseGroup,
// from GroupSeed with the round), among those that are neither members
// nor dropped before. fresh are the members drawn. A pure function of its
// arguments, so that PickGroup's rules hold for what it returns; ErrNoGroup
// when too few candidates are left.
func Replacement(info *jobs.JobInfo, g records.Group, silent []string, cands []GroupCandidate, chooser string) (next records.Group, fresh []string, err error) {
	var pool []GroupCandidate
	for _, c := range cands {
		if c.CardModel == g.CardModel && !g.Has(c.ID) && !slices.Contains(g.Dropped, c.ID) {
			pool = append(pool, c)
		}
	}
	sub := *info
	sub.Requirements.Replicas = uint32(len(silent))
	sub.Requirements.GPUModel = g.CardModel
	seed := dispatch.Seed(GroupSeed(info), []byte("round"), []byte(strconv.FormatUint(uint64(g.Round)+1, 10)))
	drawn, err := ChooseGroup(&sub, pool, seed, chooser)
	if err != nil {
		return records.Group{}, nil, err
	}
	next = records.Group{Version: records.GroupVersion, Job: g.Job, CardModel: g.CardModel, Chooser: chooser, Round: g.Round + 1}
	for _, m := range g.Members {
		if !slices.Contains(silent, m) {
			next.Members = append(next.Members, m)
		}
	}
	next.Members = append(next.Members, drawn.Members...)
	slices.Sort(next.Members)
	next.Dropped = append(slices.Clone(g.Dropped), silent...)
	slices.Sort(next.Dropped)
	return next, drawn.Members, nil
}

func eligibleCount(m map[string][]GroupCandidate) int {
	n := 0
	for _, cs := range m {
		n += len(cs)
	}
	return n
}
