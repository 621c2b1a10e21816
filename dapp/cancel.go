package dapp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/fetch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

var (
	// ErrNotMine: the job was not submitted by this client.
	ErrNotMine = errors.New("dapp: not a job this node submitted")
	// ErrStarted: a MicroJob of the job is committed (or the job has a
	// verdict), so it can no longer be cancelled.
	ErrStarted = errors.New("dapp: work on the job has started")
	// ErrNoSigner: the job's creator is not this node's wallet, so the
	// node cannot sign its cancel record.
	ErrNoSigner = errors.New("dapp: the node's wallet is not the job's creator")
	// ErrNoFetch: content must be read to hash or size it, and the client
	// has no fetcher.
	ErrNoFetch = errors.New("dapp: no fetcher to read content by URI")
)

// Started reports whether work on job id has started: a MicroJob
// commitment or a verdict is in the store.
func (c *Client) Started(ctx context.Context, id jobs.ID) (bool, error) {
	recs, err := c.p.Store.Query(ctx, records.JobKey(id)+"/")
	if err != nil {
		return false, err
	}
	for _, r := range recs {
		k, err := records.Parse(r.Key)
		if err != nil || k.Job != id {
			continue
		}
		if k.Type == records.VerdictType || (k.Type == records.CommitType && k.Peer == r.AuthorText()) {
			return true, nil
		}
	}
	return false, nil
}

// Cancel withdraws a job this client submitted before any work on it has
// started: with a chain it aborts the escrow (refunded to the creator as
// credit), and it writes the creator's signed cancel record, which
// processors honour. The client stops announcing the job. Cancelling a
// cancelled job again is no error.
func (c *Client) Cancel(ctx context.Context, id jobs.ID) error {
	c.mu.Lock()
	info := c.mine[id]
	c.mu.Unlock()
	if info == nil {
		return fmt.Errorf("%w: %s", ErrNotMine, id)
	}
	if ok, err := records.Cancelled(ctx, c.p.Store, info); err != nil {
		return err
	} else if ok {
		c.close(ctx, id, stateCancelled)
		return nil
	}
	started, err := c.Started(ctx, id)
	if err != nil {
		return err
	}
	if started {
		return fmt.Errorf("%w: job %s", ErrStarted, id)
	}
	key := c.p.WalletKey
	if key == nil || jobs.Address(ethcrypto.PubkeyToAddress(key.PublicKey)) != info.Creator {
		return fmt.Errorf("%w: creator %s", ErrNoSigner, info.Creator)
	}
	if c.p.Chain != nil {
		key := c.p.Chain.KeyOf(common.Hash(id))
		ej, err := c.p.Chain.Job(ctx, key)
		if err != nil {
			return fmt.Errorf("dapp: reading the escrow of job %s: %w", id, err)
		}
		switch ej.State {
		case escrow.JobFunded:
			rcpt, err := c.p.Chain.Abort(ctx, key)
			if errors.Is(err, escrow.ErrWorkStarted) {
				return fmt.Errorf("%w: job %s: %w", ErrStarted, id, err)
			}
			if err != nil {
				return fmt.Errorf("dapp: aborting the escrow of job %s: %w", id, err)
			}
			c.log.Info("job escrow aborted", "job", id, "tx", rcpt.TxHash)
		case escrow.JobSettled:
			return fmt.Errorf("%w: job %s is settled", ErrStarted, id)
		}
	}
	rec, err := records.SignCancel(id, key)
	if err != nil {
		return err
	}
	if err := c.p.Store.Put(ctx, records.CancelKey(id), records.CancelType, rec); err != nil {
		return fmt.Errorf("dapp: storing the cancel record: %w", err)
	}
	c.close(ctx, id, stateCancelled)
	c.m.cancelled.Inc()
	c.log.Info("job cancelled", "job", id)
	return nil
}

// Describe reads the content uri names once through the fetcher, at most
// limit bytes, and returns its SHA-256 and size.
func (c *Client) Describe(ctx context.Context, uri string, limit int64) (jobs.Data, error) {
	if err := jobs.ValidateURI(uri); err != nil {
		return jobs.Data{}, err
	}
	h := sha256.New()
	n, err := c.readContent(ctx, "data", uri, limit, h)
	if err != nil {
		return jobs.Data{}, err
	}
	d := jobs.Data{Source: jobs.Source{URI: uri}, Size: uint64(n)}
	copy(d.SHA256[:], h.Sum(nil))
	return d, nil
}

// DescribeData is Describe with the processors' limit for data; want,
// when not zero, is checked against the hash (ErrHashMismatch from
// package fetch). Code is read by CheckCode.
func (c *Client) DescribeData(ctx context.Context, uri string, want jobs.Hash) (jobs.Data, error) {
	d, err := c.Describe(ctx, uri, c.p.MaxDataSize)
	if err != nil {
		return d, err
	}
	if !want.IsZero() && d.SHA256 != want {
		return d, fmt.Errorf("%w: %s has SHA-256 %s, not %s", fetch.ErrHashMismatch, uri, hex.EncodeToString(d.SHA256[:]), strings.ToLower(want.String()))
	}
	return d, nil
}
