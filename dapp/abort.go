package dapp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// ErrAborted means the mesh dropped the job from its queue (a JobAborted
// record); with a chain the client has taken the escrow back.
var ErrAborted = errors.New("dapp: job aborted by the mesh")

// checkAborted looks for JobAborted records of the client's open jobs:
// such a job is no longer announced and, with a chain, its escrow is
// taken back through the contract's abort.
func (c *Client) checkAborted(ctx context.Context) {
	for _, info := range c.openJobs() {
		id := info.ID()
		if _, err := records.ReadAborted(ctx, c.p.Store, id); err != nil {
			continue
		}
		if err := c.abort(ctx, info); err != nil {
			c.log.Warn("taking back the escrow of an aborted job", "job", id, "err", err)
			continue
		}
		c.mu.Lock()
		delete(c.open, id)
		c.mu.Unlock()
	}
}

// abort takes back the escrow of an aborted job this client created: only
// when the chain holds it funded with this wallet as its creator.
func (c *Client) abort(ctx context.Context, info *jobs.JobInfo) error {
	id := info.ID()
	if c.p.Chain == nil {
		c.log.Info("job aborted by the mesh", "job", id)
		return nil
	}
	key := c.p.Chain.KeyOf(common.Hash(id))
	j, err := c.p.Chain.Job(ctx, key)
	if err != nil {
		return err
	}
	if j.State != escrow.JobFunded || !strings.EqualFold(j.Creator.Hex(), c.p.Chain.From().Hex()) {
		return nil // settled, refunded, already aborted, or not ours to abort
	}
	_, err = c.p.Chain.Abort(ctx, key)
	if errors.Is(err, escrow.ErrWorkStarted) {
		// A processor joined: the job ends by settle, or by refund after
		// its deadline.
		c.log.Info("job aborted by the mesh after a processor joined its escrow; it is refunded after its deadline", "job", id)
		return nil
	}
	if err != nil {
		return fmt.Errorf("dapp: abort of job %s: %w", id, err)
	}
	c.log.Info("job aborted by the mesh; escrow taken back", "job", id, "amount", j.Amount)
	return nil
}
