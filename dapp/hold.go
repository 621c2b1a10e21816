package dapp

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/processor"
)

// The creator's node keeps what its jobs need and what they produce:
// the job's ipfs:// inputs it holds are pinned for the job (until the
// node releases the job's pins, after it is settled), and once the job has
// a verdict its output is fetched whole, pinned for good, and the node
// writes its holder record. So the output outlives the processor that
// assembled it.

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
		if err := c.p.Blocks.Pin(ctx, k, processor.JobPinOwner(info.ID())); err != nil {
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

// holdOutput fetches and pins job id's output and writes this node's
// holder record.
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
	if err := c.p.Blocks.Pin(pctx, res.Output, processor.OutputPinOwner(id)); err != nil {
		return err
	}
	self := c.p.Store.Self()
	if _, err := c.p.Store.Get(ctx, processor.HolderKey(id, self)); err == nil {
		return nil
	} else if !errors.Is(err, crdt.ErrNotFound) {
		return err
	}
	if err := processor.WriteHolder(ctx, c.p.Store, self, id, res.Output); err != nil {
		return err
	}
	c.log.Info("holding the job's output", "job", id, "output", res.Output)
	return nil
}
