package node

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// A node pins what it keeps for a job under records.JobPinOwner: a
// processor its MicroJob results, the output it assembled and the verdict
// body; a creator the job's inputs. keepPins releases those pins once the
// job is over (ipfs.Node.Release: they expire after [ipfs] pin_retention),
// and drops this node's holder record of an output it does not keep for
// good. The creator's own copy of the output (records.OutputPinOwner)
// is never released here.

// pinKeepEvery is how often the node looks for jobs that are over.
const pinKeepEvery = time.Minute

func (n *Node) keepPins(ctx context.Context) {
	defer n.wg.Done()
	t := time.NewTicker(pinKeepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := n.releaseFinished(ctx, time.Now()); err != nil && ctx.Err() == nil {
			n.Log.Warn("releasing the pins of finished jobs", "err", err)
		}
	}
}

// releaseFinished releases the unexpired job pins of every job that is
// over at now.
func (n *Node) releaseFinished(ctx context.Context, now time.Time) error {
	pins, err := n.IPFS.Pins(ctx)
	if err != nil {
		return err
	}
	held := map[string]bool{} // owners with a pin that does not expire yet
	for _, p := range pins {
		if p.Expires.IsZero() {
			held[p.Owner] = true
		}
	}
	for owner := range held {
		rest, ok := strings.CutPrefix(owner, "job:")
		if !ok {
			continue
		}
		id, err := jobs.ParseHash(rest)
		if err != nil {
			continue
		}
		over, err := n.jobOver(ctx, id, now)
		if err != nil || !over {
			continue
		}
		if err := n.IPFS.Release(ctx, owner); err != nil {
			return err
		}
		if !held[records.OutputPinOwner(id)] {
			n.dropHolder(ctx, id)
		}
	}
	return nil
}

// jobOver reports whether nothing more will happen to job id that needs
// its results or inputs: it is settled on chain, aborted or cancelled, it
// has a verdict on a mesh without a chain, or its deadline has passed.
// A job the store does not know is over too.
func (n *Node) jobOver(ctx context.Context, id jobs.ID, now time.Time) (bool, error) {
	r, err := n.Store.Get(ctx, records.JobKey(id))
	if errors.Is(err, crdt.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	info, err := jobs.Decode(r.Payload)
	if err != nil || info.ID() != id {
		return true, nil
	}
	if info.Deadline != 0 && now.After(time.Unix(info.Deadline, 0)) {
		return true, nil
	}
	if n.Escrow != nil {
		// With a chain, the chain says when a job is over: store records
		// saying so could be written by anyone.
		j, err := n.Escrow.Job(ctx, escrow.JobKey(common.Address(info.Creator), common.Hash(id)))
		if err != nil {
			return false, err
		}
		return j.State != escrow.JobFunded && j.State != escrow.JobNone, nil
	}
	if _, err := n.Store.Get(ctx, records.AbortedKey(id)); err == nil {
		return true, nil
	}
	// Only a verdict that counts (one a forger cannot write) ends a job
	// without a chain.
	if _, err := finish.ReadVerdictBy(ctx, n.Store, n.IPFS, id, nil, n.rules); err == nil {
		return true, nil
	} else if !errors.Is(err, finish.ErrNoVerdict) {
		return false, err
	}
	cancelled, err := records.Cancelled(ctx, n.Store, info)
	return err == nil && cancelled, nil
}

// dropHolder deletes this node's holder record of job id's output, if
// any: the node no longer keeps the output for good.
func (n *Node) dropHolder(ctx context.Context, id jobs.ID) {
	key := records.HolderKey(id, n.Store.Self())
	if _, err := n.Store.Get(ctx, key); err != nil {
		return
	}
	if err := n.Store.Delete(ctx, key); err != nil {
		n.Log.Warn("dropping a holder record", "job", id, "err", err)
	}
}
