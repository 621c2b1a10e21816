package meshview

import (
	"context"
	"fmt"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/probe"
)

// probeTasks reads the probes of the last Probes.History windows whose
// deadline has passed on this node's clock, in no particular order
// (replayOrder sorts them). A probe is read afresh on each view: a record
// written in time may reach this node after the deadline, and every node
// counts it once it has it. Members must have an advertisement among ads.
func (f *Facts) probeTasks(ctx context.Context, now time.Time, ads []Advertised) ([]probe.Task, error) {
	cfg := f.cfg.Probes
	if !cfg.Enabled() {
		return nil, nil
	}
	advertised := make(map[string]bool, len(ads))
	for _, a := range ads {
		advertised[a.PeerID] = true
	}
	isAdvertised := func(id string) bool { return advertised[id] }
	cur := cfg.WindowOf(now)
	first := cur - min(cur, uint64(cfg.History-1))
	f.expect.Prune(first)
	var out []probe.Task
	for w := first; w <= cur; w++ {
		recs, err := f.p.Store.Query(ctx, probe.WindowPrefix(w))
		if err != nil {
			return nil, fmt.Errorf("meshview: reading probes of window %d: %w", w, err)
		}
		challenges := map[string]crdt.Record{}
		answers := map[string][]crdt.Record{}
		for _, r := range recs {
			k, err := probe.ParseKey(r.Key)
			if err != nil || k.Window != w {
				continue
			}
			if k.Kind == probe.KindChallenge {
				challenges[k.Challenger] = r
			} else {
				answers[k.Challenger] = append(answers[k.Challenger], r)
			}
		}
		for p, c := range challenges {
			t, err := cfg.Outcome(c, answers[p], isAdvertised, &f.expect, now)
			if err != nil || len(t.Outcome.Assigned) == 0 {
				continue // not due, not a probe, or nobody answered: the same on every node once it has the records
			}
			out = append(out, t)
		}
	}
	return out, nil
}
