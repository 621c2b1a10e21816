package processor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/probe"
)

// prober is this processor's part in the probe tasks (package probe): it
// writes its challenge once per window, at its offset, unless a task of
// the window already scored it, and answers the challenges that name it.
type prober struct {
	w   *Worker
	cfg probe.Config
	// challenged is the last window this processor challenged in.
	challenged uint64
	// answered are the probes this processor answered, by challenge key.
	answered map[string]uint64
}

// probeLoop runs the prober until ctx ends: at each change under
// probe.Prefix, at this processor's next challenge time and at least every
// Poll.
func (w *Worker) probeLoop(ctx context.Context, changes <-chan crdt.Change) {
	defer w.wg.Done()
	pr := &prober{w: w, cfg: w.cfg.Probes, challenged: ^uint64(0), answered: map[string]uint64{}}
	for {
		next := pr.step(ctx)
		wait := min(w.cfg.Poll, max(next.Sub(w.now()), 0))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-changes:
		case <-t.C:
		}
		t.Stop()
	}
}

// step challenges if it is time, answers what names this processor, and
// returns when this processor's next challenge is due.
func (pr *prober) step(ctx context.Context) time.Time {
	now := pr.w.now()
	cur := pr.cfg.WindowOf(now)
	at := pr.cfg.ChallengeAt(cur, pr.w.self)
	if pr.challenged != cur && !now.Before(at) && pr.scoredIn(cur) {
		pr.challenged = cur // a task of this window already scored it
	}
	if pr.challenged != cur && !now.Before(at) {
		if err := pr.challenge(ctx, cur); err != nil {
			pr.w.log.Warn("writing a probe challenge", "window", cur, "err", err)
		} else {
			pr.challenged = cur
		}
	}
	for _, w := range []uint64{cur - min(cur, 1), cur} {
		if err := pr.answerWindow(ctx, w, now); err != nil && ctx.Err() == nil {
			pr.w.log.Warn("answering probes", "window", w, "err", err)
		}
	}
	for k, w := range pr.answered {
		if w+1 < cur {
			delete(pr.answered, k)
		}
	}
	if pr.challenged == cur {
		return pr.cfg.ChallengeAt(cur+1, pr.w.self)
	}
	return at
}

// scoredIn reports whether this processor's view holds a scored task of
// its own that ended in window w: then it does not challenge in w, so a
// busy mesh writes no probe records (its members may still answer
// others' challenges).
func (pr *prober) scoredIn(w uint64) bool {
	v := pr.w.dview.Load()
	if v == nil {
		return false
	}
	p, ok := v.Processor(pr.w.self)
	return ok && !p.SpeedAt.Before(pr.cfg.Start(w))
}

// challenge writes this processor's challenge of window w, unless the
// store already holds one (a restart within the window): its group is
// itself and up to two live processors it is connected to (probe.Group).
func (pr *prober) challenge(ctx context.Context, w uint64) error {
	key := probe.ChallengeKey(w, pr.w.self)
	if _, err := pr.w.p.Store.Get(ctx, key); err == nil {
		return nil
	} else if !errors.Is(err, crdt.ErrNotFound) {
		return err
	}
	var cands []string
	for _, p := range pr.w.dview.Load().Nodes() {
		id, err := peer.Decode(p.ID)
		if err == nil && pr.w.p.Host.Connected(id) {
			cands = append(cands, p.ID)
		}
	}
	b, err := json.Marshal(probe.Challenge{Window: w, Members: probe.Group(w, pr.w.self, cands)})
	if err != nil {
		return err
	}
	return pr.w.p.Store.Put(ctx, key, probe.ChallengeType, b)
}

// answerWindow answers, once each, the challenges of window w that name
// this processor and whose deadline has not passed.
func (pr *prober) answerWindow(ctx context.Context, w uint64, now time.Time) error {
	recs, err := pr.w.p.Store.QueryKeys(ctx, probe.WindowPrefix(w), func(key string) bool {
		k, err := probe.ParseKey(key)
		return err == nil && k.Kind == probe.KindChallenge
	})
	if err != nil {
		return err
	}
	for _, r := range recs {
		if _, done := pr.answered[r.Key]; done || r.Tombstone || now.After(r.Time().Add(pr.cfg.Deadline)) {
			continue
		}
		k, err := probe.ParseKey(r.Key)
		if err != nil || r.AuthorText() != k.Challenger {
			continue
		}
		c, err := probe.DecodeChallenge(r.Payload)
		if err != nil || c.Validate(k.Challenger) != nil || !slices.Contains(c.Members, pr.w.self) {
			continue
		}
		// Tried once: a run that failed is not retried at every change,
		// and a late answer would not count anyway.
		pr.answered[r.Key] = w
		if err := pr.answer(ctx, k); err != nil && ctx.Err() == nil {
			pr.w.log.Warn("answering a probe", "key", r.Key, "err", err)
		}
	}
	return nil
}

// answer runs the probe module, writes the commitment and, once it reads
// the commitment back from the store, the result.
func (pr *prober) answer(ctx context.Context, k probe.Key) error {
	out, err := pr.w.exec.Run(ctx, probe.Module(), probe.Input(k.Window, k.Challenger))
	if err != nil {
		return err
	}
	digest := probe.Digest(out)
	commit, err := json.Marshal(probe.NewAnswer(probe.CommitHash(digest, pr.w.self)))
	if err != nil {
		return err
	}
	ckey := probe.CommitKey(k.Window, k.Challenger, pr.w.self)
	if err := pr.w.p.Store.Put(ctx, ckey, probe.CommitType, commit); err != nil {
		return err
	}
	if _, err := pr.w.p.Store.Get(ctx, ckey); err != nil {
		return fmt.Errorf("reading the commitment back: %w", err)
	}
	result, err := json.Marshal(probe.NewAnswer(digest))
	if err != nil {
		return err
	}
	return pr.w.p.Store.Put(ctx, probe.ResultKey(k.Window, k.Challenger, pr.w.self), probe.ResultType, result)
}
