package custody

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
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// Nothing lost: a job's output is held by two nodes before its verdict is
// written, so losing the finalizer right after the verdict loses nothing.
// The designated finalizer assembles the output, pins it and writes its
// holder record (Assemble); it then writes the verdict only once another
// peer's holder record names the same output (HandedOff):
//
//   - the creator's node (the author of the job's JobInfo record) when it
//     is connected to the finalizer: its DApp client follows the holder
//     records of its open jobs and fetches, pins and says it holds the
//     output a discloser of the job says it holds (dapp/hold.go);
//   - otherwise any other node: the runner-up finalizer (second in
//     finish.FinalizerOrder), standing by, assembles the output itself as soon
//     as it sees the designated finalizer's holder record, when it too
//     finds the creator's node not connected (HoldSecond).
//
// The finalizer waits at most Config.HoldWait from its own holder record;
// then it writes the verdict anyway (a job must not wait forever for a
// node that cannot hold its output), logs a warning and counts it
// (Params.SingleHolder). The wait is a pass of the processor's settle
// loop that returns: a holder record wakes the loop, and so does every
// Poll.

// handoffState is what this node knows of one job's handoff; part of
// jobCustody, guarded by Keeper.mu.
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

// held records that this node holds assembly key of job id from now on.
func (k *Keeper) held(id jobs.ID, key [32]byte, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	h := &k.job(id).handoff
	if h.heldAt == nil {
		h.heldAt = map[[32]byte]time.Time{}
	}
	if _, ok := h.heldAt[key]; !ok {
		h.heldAt[key] = now
	}
}

// creatorOf returns the peer that wrote job id's JobInfo record, read
// once.
func (k *Keeper) creatorOf(ctx context.Context, id jobs.ID) (peer.ID, error) {
	k.mu.Lock()
	c := k.job(id).handoff.creator
	k.mu.Unlock()
	if c != "" {
		return c, nil
	}
	r, err := k.p.Store.Get(ctx, records.JobKey(id))
	if err != nil {
		return "", fmt.Errorf("custody: the record of job %s: %w", id, err)
	}
	k.mu.Lock()
	k.job(id).handoff.creator = r.Author
	k.mu.Unlock()
	return r.Author, nil
}

// creatorOnline reports whether job id's creator's node is another node,
// connected to this one: then it is the second holder of the output.
func (k *Keeper) creatorOnline(ctx context.Context, id jobs.ID) bool {
	c, err := k.creatorOf(ctx, id)
	return err == nil && c != k.self && k.connected(c)
}

// connected reports whether p is connected to this node.
func (k *Keeper) connected(p peer.ID) bool {
	return k.p.Network != nil && k.p.Network.Connected(p)
}

// HandedOff reports whether this node, holding out, its assembly of
// verdict v of job id, may write its verdict at now: a second node holds
// out, or HoldWait is over since this node held it.
func (k *Keeper) HandedOff(ctx context.Context, id jobs.ID, v microjob.Verdict, out cid.Cid, now time.Time) (bool, error) {
	if k.cfg.HoldWait == 0 || k.p.Blocks == nil {
		return true, nil
	}
	held, err := records.HeldOutputs(ctx, k.p.Store, id)
	if err != nil {
		return false, err
	}
	creator, err := k.creatorOf(ctx, id)
	if err != nil && !errors.Is(err, crdt.ErrNotFound) {
		return false, err
	}
	online := k.creatorOnline(ctx, id)
	for p, c := range held {
		if p != k.self && c.Equals(out) && (!online || p == creator) {
			k.log.Debug("output handed off", "job", id, "output", out, "holder", p)
			return true, nil
		}
	}
	k.mu.Lock()
	h := &k.job(id).handoff
	since, ok := h.heldAt[sha256.Sum256(v.Encode())]
	warned := h.warned
	k.mu.Unlock()
	if ok && now.Sub(since) < k.cfg.HoldWait {
		return false, nil
	}
	if !warned {
		k.mu.Lock()
		h.warned = true
		k.mu.Unlock()
		if k.p.SingleHolder != nil {
			k.p.SingleHolder.Inc()
		}
		k.log.Warn("writing the verdict with no second node holding the output", "job", id, "output", out,
			"creator_connected", online, "waited", k.cfg.HoldWait)
	}
	return true, nil
}

// HoldSecond is the runner-up finalizer's part, while it stands by for
// the designated finalizer of the job (info, plan), judged j from recs:
// once that finalizer's holder record is in and the creator's node is
// not connected here, it assembles the output as well (Assemble holds
// it), so that two nodes hold it before the verdict. final reports
// whether j is one a verdict may follow from; it is asked only then.
func (k *Keeper) HoldSecond(ctx context.Context, info *jobs.JobInfo, plan *jobs.Plan, j finish.Judgement, recs *finish.Records, final func(context.Context) (bool, error)) error {
	id := plan.JobID
	key := sha256.Sum256(j.V.Encode())
	k.mu.Lock()
	jc := k.job(id)
	_, done := jc.outputs[key]
	h := &jc.handoff
	h.await = ""
	second := len(j.Order) > 1 && j.Order[1] == k.self.String() && !done
	if second && k.cfg.HoldWait > 0 && k.p.Blocks != nil {
		h.await = j.Order[0]
	}
	first := h.await
	k.mu.Unlock()
	if first == "" || k.creatorOnline(ctx, id) {
		return nil
	}
	fp, err := peer.Decode(first)
	if err != nil {
		return nil
	}
	r, err := k.p.Store.Get(ctx, records.HolderKey(id, fp))
	if errors.Is(err, crdt.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, _, ok := records.ReadHolder(id, r); !ok {
		return nil
	}
	if ok, err := final(ctx); err != nil || !ok {
		return err
	}
	out, err := k.Assemble(ctx, info, plan, j.V, recs)
	if err != nil {
		return fmt.Errorf("assembling the output as its second holder: %w", err)
	}
	k.mu.Lock()
	h.await = ""
	k.mu.Unlock()
	k.log.Info("holding the output as the runner-up finalizer", "job", id, "output", out, "finalizer", first)
	return nil
}

// HoldDue reports whether this node, standing by for job id's designated
// finalizer as its runner-up, should judge the job again now: that
// finalizer's holder record is in and the creator's node is not
// connected here.
func (k *Keeper) HoldDue(ctx context.Context, id jobs.ID) bool {
	k.mu.Lock()
	first := k.job(id).handoff.await
	k.mu.Unlock()
	if first == "" {
		return false
	}
	fp, err := peer.Decode(first)
	if err != nil {
		return false
	}
	if _, err := k.p.Store.Get(ctx, records.HolderKey(id, fp)); err != nil {
		return false
	}
	return !k.creatorOnline(ctx, id)
}
