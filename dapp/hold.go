package dapp

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// The creator's node keeps what its jobs need and what they produce:
// the job's ipfs:// inputs it holds are pinned for the job (until the
// node releases the job's pins, after it is settled), and its output is
// held before the verdict and for good after it.
//
// Before the verdict the job's finalizer hands the output to the
// creator's node (custody/handoff.go): for each open job the client
// follows the job's holder records (a store Watch on the job's holders
// prefix; the whole prefix is read again at start, after an overflow and
// every Announce period). A record by a processor with a disclosure in
// the job makes the node fetch and pin the output it names (pin owner
// records.CandidatePinOwner, expiring with the job's deadline) and
// write its own holder record naming it. Of the candidates it holds, its
// record names that of the highest-ranked holder
// (records.FinalizerRank): the designated finalizer's when it is among them. What
// a forger can make the node fetch is bounded: only disclosers of the job
// count, one candidate per holder and at most maxCandidates per job, none
// while the block store is over its quota, and each holder is looked at
// maxHolderChecks times at most.
//
// Once the job has a verdict, the output it names is fetched whole (it is
// local when it was handed off), pinned for good
// (records.OutputPinOwner), the candidates are released, and the node's
// holder record names that output.

// holdTimeout bounds one attempt to fetch and pin a job's output; a
// failed attempt is retried on the next pass.
const holdTimeout = 5 * time.Minute

// pinInputs pins, for job info, its ipfs:// code and data that are in
// this node's block layer (content uploaded here); content elsewhere is
// not fetched for it.
func (c *Client) pinInputs(ctx context.Context, info *jobs.JobInfo) {
	if c.p.Blocks == nil {
		return
	}
	for _, u := range []string{info.Code.URI, info.Data.URI} {
		rest, ok := strings.CutPrefix(u, "ipfs://")
		if !ok {
			continue
		}
		k, err := cid.Decode(rest)
		if err != nil {
			continue // ipfs://CID/path: the file is inside a DAG pinned as a whole elsewhere
		}
		if has, err := c.p.Blocks.Has(ctx, k); err != nil || !has {
			continue
		}
		if err := c.p.Blocks.Pin(ctx, k, records.JobPinOwner(info.ID())); err != nil {
			c.log.Warn("pinning a job input", "job", info.ID(), "cid", k, "err", err)
		}
	}
}

// holdLater marks a finished job's output to be held, and wakes holdLoop.
func (c *Client) holdLater(id jobs.ID) {
	c.mu.Lock()
	c.toHold[id] = true
	c.mu.Unlock()
	select {
	case c.holdNow <- struct{}{}:
	default:
	}
}

// holdLoop holds the outputs of finished jobs: at start (the jobs a
// restart found finished), when a verdict arrives, and every Announce
// period for those that failed.
func (c *Client) holdLoop(ctx context.Context) {
	defer c.wg.Done()
	t := time.NewTicker(c.p.Announce)
	defer t.Stop()
	for {
		c.holdOutputs(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-c.holdNow:
		}
	}
}

func (c *Client) holdOutputs(ctx context.Context) {
	if c.p.Blocks == nil {
		return
	}
	c.mu.Lock()
	var ids []jobs.ID
	for id := range c.toHold {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	for _, id := range ids {
		if ctx.Err() != nil {
			return
		}
		err := c.holdOutput(ctx, id)
		if errors.Is(err, errNoVerdict) {
			continue
		}
		if err != nil {
			c.log.Warn("holding a job's output (retried)", "job", id, "err", err)
			continue
		}
		c.mu.Lock()
		delete(c.toHold, id)
		c.mu.Unlock()
	}
}

var errNoVerdict = errors.New("dapp: no verdict yet")

// holdOutput fetches and pins job id's output, releases the candidates
// held before the verdict, and writes this node's holder record naming
// the output.
func (c *Client) holdOutput(ctx context.Context, id jobs.ID) error {
	res, ok, err := LoadStatus(ctx, c.p.Store, c.bodies(), id)
	if err != nil {
		return err
	}
	if !ok {
		return errNoVerdict
	}
	pctx, cancel := context.WithTimeout(ctx, holdTimeout)
	defer cancel()
	if err := c.p.Blocks.Pin(pctx, res.Output, records.OutputPinOwner(id)); err != nil {
		return err
	}
	if err := c.p.Blocks.Release(ctx, records.CandidatePinOwner(id)); err != nil {
		c.log.Warn("releasing the output candidates", "job", id, "err", err)
	}
	self := c.p.Store.Self()
	r, err := c.p.Store.Get(ctx, records.HolderKey(id, self))
	switch {
	case err == nil:
		if _, out, ok := records.ReadHolder(id, r); ok && out.Equals(res.Output) {
			return nil
		}
	case !errors.Is(err, crdt.ErrNotFound):
		return err
	}
	if err := records.WriteHolder(ctx, c.p.Store, self, id, res.Output); err != nil {
		return err
	}
	c.log.Info("holding the job's output", "job", id, "output", res.Output)
	return nil
}

// Bounds on what holder records can make the creator's node do for one
// job: the holders it looks at, how often it looks at each, and the
// candidates it fetches.
const (
	maxHolders      = 64
	maxHolderChecks = 4
	maxCandidates   = 8
	// maxDisclosureReads bounds the disclosures read to find whether a
	// holder is a discloser of the job.
	maxDisclosureReads = 4
)

// followHolders starts following open job id's holder records, unless
// the client already does or is closed.
func (c *Client) followHolders(id jobs.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	info := c.open[id]
	if c.p.Blocks == nil || info == nil || c.runCtx == nil || c.runCtx.Err() != nil || c.following[id] != nil {
		return
	}
	ctx, cancel := context.WithCancel(c.runCtx)
	c.following[id] = cancel
	c.wg.Add(1)
	go c.follow(ctx, info)
}

// stopFollowing stops following job id's holder records; unless the job
// is done (its verdict's output is held then, and the candidates
// released: holdOutput), the candidates held for it are released.
func (c *Client) stopFollowing(ctx context.Context, id jobs.ID, done bool) {
	c.mu.Lock()
	stop := c.following[id]
	delete(c.following, id)
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
	if !done && c.p.Blocks != nil {
		if err := c.p.Blocks.Release(ctx, records.CandidatePinOwner(id)); err != nil {
			c.log.Warn("releasing the output candidates", "job", id, "err", err)
		}
	}
}

// candidates is what the client found of one open job's holder records.
type candidates struct {
	info   *jobs.JobInfo
	id     jobs.ID
	checks map[peer.ID]int     // times each holder was looked at
	taken  map[peer.ID]cid.Cid // the candidate pinned, by holder
	best   peer.ID             // whose candidate this node's record names
}

// follow acts on job info's holder records until ctx ends or the job is
// no longer open.
func (c *Client) follow(ctx context.Context, info *jobs.JobInfo) {
	defer c.wg.Done()
	id := info.ID()
	cs := &candidates{info: info, id: id, checks: map[peer.ID]int{}, taken: map[peer.ID]cid.Cid{}}
	changes := c.p.Store.Watch(ctx, records.HoldersPrefix(id))
	t := time.NewTicker(c.p.Announce)
	defer t.Stop()
	c.takeHolders(ctx, cs)
	for {
		select {
		case <-ctx.Done():
			return
		case ch, ok := <-changes:
			if !ok {
				return
			}
			switch ch.Kind {
			case crdt.ChangePut:
				c.takeHolder(ctx, cs, ch.Record)
			case crdt.ChangeOverflow:
				c.takeHolders(ctx, cs)
			}
		case <-t.C:
			if !c.Open(id) {
				return
			}
			// A holder refused because its disclosure had not reached
			// this replica yet is looked at again.
			c.takeHolders(ctx, cs)
		}
	}
}

// takeHolders acts on every holder record of cs's job.
func (c *Client) takeHolders(ctx context.Context, cs *candidates) {
	recs, err := c.p.Store.Query(ctx, records.HoldersPrefix(cs.id))
	if err != nil {
		if ctx.Err() == nil {
			c.log.Warn("reading a job's holder records", "job", cs.id, "err", err)
		}
		return
	}
	for _, r := range recs {
		c.takeHolder(ctx, cs, r)
	}
}

// takeHolder acts on one holder record of cs's job: a discloser's
// candidate is fetched, pinned and named in this node's holder record
// when it ranks first.
func (c *Client) takeHolder(ctx context.Context, cs *candidates, r crdt.Record) {
	p, out, ok := records.ReadHolder(cs.id, r)
	if !ok || p == c.p.Store.Self() {
		return
	}
	if _, ok := cs.taken[p]; ok {
		return // one candidate per holder
	}
	if n, seen := cs.checks[p]; n >= maxHolderChecks || !seen && len(cs.checks) >= maxHolders {
		return
	}
	cs.checks[p]++
	if len(cs.taken) >= maxCandidates {
		c.refuseCandidate(cs, p, out, "limit")
		return
	}
	disc, err := c.discloser(ctx, cs.id, p)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Warn("reading a holder's disclosures", "job", cs.id, "holder", p, "err", err)
		}
		return
	}
	if !disc {
		c.refuseCandidate(cs, p, out, "not-discloser")
		return
	}
	if q := c.p.Blocks.Config().MaxStorageBytes; q > 0 && c.p.Blocks.StoredBytes() >= q {
		c.refuseCandidate(cs, p, out, "quota")
		return
	}
	if err := c.pinCandidate(ctx, cs, out); err != nil {
		if ctx.Err() == nil {
			c.refuseCandidate(cs, p, out, "failed")
			c.log.Warn("fetching an output candidate (retried)", "job", cs.id, "holder", p, "output", out, "err", err)
		}
		return
	}
	cs.taken[p] = out
	c.m.candidates.WithLabelValues("held").Inc()
	if cs.best != "" && !outranks(cs.id, p, cs.best) {
		return
	}
	cs.best = p
	if err := records.WriteHolder(ctx, c.p.Store, c.p.Store.Self(), cs.id, out); err != nil {
		c.log.Warn("writing the holder record", "job", cs.id, "err", err)
		return
	}
	c.log.Info("holding the job's output before its verdict", "job", cs.id, "output", out, "from", p)
}

// pinCandidate fetches and pins out for cs's job until its deadline (and
// the block layer's retention after it), or until the verdict.
func (c *Client) pinCandidate(ctx context.Context, cs *candidates, out cid.Cid) error {
	var until time.Time
	if cs.info.Deadline != 0 {
		until = time.Unix(cs.info.Deadline, 0).Add(c.p.Blocks.Config().PinRetention)
	}
	pctx, cancel := context.WithTimeout(ctx, holdTimeout)
	defer cancel()
	return c.p.Blocks.PinUntil(pctx, out, records.CandidatePinOwner(cs.id), until)
}

// refuseCandidate counts and logs that holder p's candidate out was not
// taken, for reason.
func (c *Client) refuseCandidate(cs *candidates, p peer.ID, out cid.Cid, reason string) {
	c.m.candidates.WithLabelValues(reason).Inc()
	c.log.Debug("output candidate not taken", "job", cs.id, "holder", p, "output", out, "reason", reason, "check", cs.checks[p])
}

// outranks reports whether processor p ranks above q among job id's
// finalizers.
func outranks(id jobs.ID, p, q peer.ID) bool {
	rp, rq := records.FinalizerRank(id, p.String()), records.FinalizerRank(id, q.String())
	return bytes.Compare(rp[:], rq[:]) > 0
}

// discloser reports whether processor p has a disclosure in job id.
func (c *Client) discloser(ctx context.Context, id jobs.ID, p peer.ID) (bool, error) {
	suffix := "/" + records.ResultType + "/" + p.String()
	n := 0
	recs, err := c.p.Store.QueryKeys(ctx, records.JobKey(id)+"/macro", func(k string) bool {
		if n >= maxDisclosureReads || !strings.HasSuffix(k, suffix) {
			return false
		}
		n++
		return true
	})
	if err != nil {
		return false, err
	}
	for _, r := range recs {
		if d, err := records.OpenDisclosure(r.Key, r.AuthorText(), r.Payload); err == nil && d.JobID == id && r.Author == p {
			return true, nil
		}
	}
	return false, nil
}
