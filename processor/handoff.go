package processor

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// Nothing lost: a job's output is held by two nodes before its verdict is
// written, so losing the finalizer right after the verdict loses nothing.
// The designated finalizer assembles the output, pins it and writes its
// holder record (assembled); it then writes the verdict only once another
// peer's holder record names the same output (handedOff):
//
//   - the creator's node (the author of the job's JobInfo record) when it
//     is connected to the finalizer: its DApp client follows the holder
//     records of its open jobs and fetches, pins and says it holds the
//     output a discloser of the job says it holds (dapp/hold.go);
//   - otherwise any other node: the runner-up finalizer (second in
//     finish.FinalizerOrder), standing by, assembles the output itself as soon
//     as it sees the designated finalizer's holder record, when it too
//     finds the creator's node not connected (holdSecond).
//
// The finalizer waits at most Config.HoldWait from its own holder record;
// then it writes the verdict anyway (a job must not wait forever for a
// node that cannot hold its output), logs a warning and counts it
// (jobmesh_processor_verdicts_single_holder_total). The wait is a pass
// of the settle loop that returns (judgeAgain): a holder record wakes the
// loop, and so does every Poll.

// handoffState is what a worker knows of one job's handoff; part of
// verdictState, guarded by Worker.mu.
type handoffState struct {
	// creator is the peer that wrote the job's JobInfo record ("" until
	// read).
	creator peer.ID
	// heldAt is when this node held each of its assemblies (by the
	// SHA-256 of the verdict) and wrote its holder record.
	heldAt map[[32]byte]time.Time
	// await is the designated finalizer whose holder record this node,
	// the runner-up, waits for to assemble the output too ("" when it
	// waits for none).
	await string
	// warned: the verdict was written with a single holder (logged once).
	warned bool
}

// held records that this node holds assembly key of js from now on.
func (w *Worker) held(js *jobState, key [32]byte, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	h := &js.verdicts.handoff
	if h.heldAt == nil {
		h.heldAt = map[[32]byte]time.Time{}
	}
	if _, ok := h.heldAt[key]; !ok {
		h.heldAt[key] = now
	}
}

// creatorOf returns the peer that wrote js's JobInfo record, read once.
func (w *Worker) creatorOf(ctx context.Context, js *jobState) (peer.ID, error) {
	w.mu.Lock()
	c := js.verdicts.handoff.creator
	w.mu.Unlock()
	if c != "" {
		return c, nil
	}
	r, err := w.p.Store.Get(ctx, records.JobKey(js.plan.JobID))
	if err != nil {
		return "", fmt.Errorf("processor: the record of job %s: %w", js.plan.JobID, err)
	}
	w.mu.Lock()
	js.verdicts.handoff.creator = r.Author
	w.mu.Unlock()
	return r.Author, nil
}

// creatorOnline reports whether js's creator's node is another node,
// connected to this one: then it is the second holder of the output.
func (w *Worker) creatorOnline(ctx context.Context, js *jobState) bool {
	c, err := w.creatorOf(ctx, js)
	return err == nil && c != w.p.Store.Self() && w.connected(c.String())
}

// handedOff reports whether this node, holding out, its assembly of
// verdict v of js, may write its verdict at now: a second node holds out,
// or HoldWait is over since this node held it.
func (w *Worker) handedOff(ctx context.Context, js *jobState, v microjob.Verdict, out cid.Cid, now time.Time) (bool, error) {
	if w.cfg.HoldWait == 0 || w.p.Blocks == nil {
		return true, nil
	}
	id := js.plan.JobID
	held, err := records.HeldOutputs(ctx, w.p.Store, id)
	if err != nil {
		return false, err
	}
	self := w.p.Store.Self()
	creator, err := w.creatorOf(ctx, js)
	if err != nil && !errors.Is(err, crdt.ErrNotFound) {
		return false, err
	}
	online := w.creatorOnline(ctx, js)
	for p, c := range held {
		if p != self && c.Equals(out) && (!online || p == creator) {
			w.log.Debug("output handed off", "job", id, "output", out, "holder", p)
			return true, nil
		}
	}
	w.mu.Lock()
	since, ok := js.verdicts.handoff.heldAt[sha256.Sum256(v.Encode())]
	warned := js.verdicts.handoff.warned
	w.mu.Unlock()
	if ok && now.Sub(since) < w.cfg.HoldWait {
		return false, nil
	}
	if !warned {
		w.mu.Lock()
		js.verdicts.handoff.warned = true
		w.mu.Unlock()
		w.m.lonelyVerdicts.Inc()
		w.log.Warn("writing the verdict with no second node holding the output", "job", id, "output", out,
			"creator_connected", online, "waited", w.cfg.HoldWait)
	}
	return true, nil
}

// holdSecond is the runner-up finalizer's part, while it stands by for
// the designated finalizer of js (judgement j of recs): once that
// finalizer's holder record is in and the creator's node is not connected
// here, it assembles the output as well (assembled holds it), so that two
// nodes hold it before the verdict.
func (w *Worker) holdSecond(ctx context.Context, js *jobState, j finish.Judgement, recs *finish.Records) error {
	key := sha256.Sum256(j.V.Encode())
	w.mu.Lock()
	_, done := js.verdicts.outputs[key]
	h := &js.verdicts.handoff
	h.await = ""
	second := len(j.Order) > 1 && j.Order[1] == w.self && !done
	if second && w.cfg.HoldWait > 0 && w.p.Blocks != nil {
		h.await = j.Order[0]
	}
	first := h.await
	w.mu.Unlock()
	if first == "" || w.creatorOnline(ctx, js) {
		return nil
	}
	fp, err := peer.Decode(first)
	if err != nil {
		return nil
	}
	r, err := w.p.Store.Get(ctx, records.HolderKey(js.plan.JobID, fp))
	if errors.Is(err, crdt.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, _, ok := records.ReadHolder(js.plan.JobID, r); !ok {
		return nil
	}
	if final, err := w.final(ctx, js, j); err != nil || !final {
		return err
	}
	out, err := w.assembled(ctx, js, j.V, recs)
	if err != nil {
		return fmt.Errorf("assembling the output as its second holder: %w", err)
	}
	w.mu.Lock()
	h.await = ""
	w.mu.Unlock()
	w.log.Info("holding the output as the runner-up finalizer", "job", js.plan.JobID, "output", out, "finalizer", first)
	return nil
}

// holdDue reports whether this node, standing by for js's designated
// finalizer as its runner-up, should judge js again now: that
// finalizer's holder record is in and the creator's node is not
// connected here.
func (w *Worker) holdDue(ctx context.Context, js *jobState) bool {
	w.mu.Lock()
	first := js.verdicts.handoff.await
	w.mu.Unlock()
	if first == "" {
		return false
	}
	fp, err := peer.Decode(first)
	if err != nil {
		return false
	}
	if _, err := w.p.Store.Get(ctx, records.HolderKey(js.plan.JobID, fp)); err != nil {
		return false
	}
	return !w.creatorOnline(ctx, js)
}
