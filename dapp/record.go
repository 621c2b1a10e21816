package dapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/query"

	"github.com/jobmesh/jobmesh/internal/strictjson"
	"github.com/jobmesh/jobmesh/jobs"
)

// Where a submitted job stands, as this client remembers it.
const (
	stateOpen      = "open"      // announced until it has a verdict
	stateDone      = "done"      // it has a verdict
	stateCancelled = "cancelled" // withdrawn by Cancel
	stateFailed    = "failed"    // failed (failed.go)
)

// submittedPrefix is the local datastore prefix of submitted-job records.
const submittedPrefix = "/submitted/"

// maxSubmitted bounds one submitted-job record: a JobInfo is at most a few
// KiB.
const maxSubmitted = 64 << 10

// ErrBadSubmitted is wrapped when a submitted-job record does not decode.
var ErrBadSubmitted = errors.New("dapp: bad submitted-job record")

// submitted is the local record of one job this client submitted, kept
// under /submitted/<job ID> in the node's own datastore (never
// replicated). Version 2 adds the secret check seed, kept until the job
// is over: a node that restarts still reveals it.
type submitted struct {
	V      int    `json:"v"`                // 2
	Job    []byte `json:"job"`              // the canonical JobInfo encoding (base64 in JSON)
	State  string `json:"state"`            // open, done or cancelled
	Secret string `json:"secret,omitempty"` // the check seed, lowercase hex; "" once the job is over
}

func encodeSubmitted(info *jobs.JobInfo, state string, secret jobs.Seed) ([]byte, error) {
	r := submitted{V: 2, Job: info.Encode(), State: state}
	if !secret.IsZero() && state == stateOpen {
		r.Secret = secret.String()
	}
	return json.Marshal(r)
}

// decodeSubmitted decodes a submitted-job record and checks it is stored
// under its own job's key and that its secret is the job's.
func decodeSubmitted(key string, b []byte) (*jobs.JobInfo, string, jobs.Seed, error) {
	info, state, secret, err := decodeSubmittedRecord(key, b)
	if err != nil {
		return nil, "", jobs.Seed{}, fmt.Errorf("%w: %w", ErrBadSubmitted, err)
	}
	return info, state, secret, nil
}

func decodeSubmittedRecord(key string, b []byte) (*jobs.JobInfo, string, jobs.Seed, error) {
	var r submitted
	if err := strictjson.Decode(b, maxSubmitted, &r); err != nil {
		return nil, "", jobs.Seed{}, err
	}
	if r.V != 2 {
		return nil, "", jobs.Seed{}, fmt.Errorf("version %d", r.V)
	}
	switch r.State {
	case stateOpen, stateDone, stateCancelled, stateFailed:
	default:
		return nil, "", jobs.Seed{}, fmt.Errorf("state %q", r.State)
	}
	info, err := jobs.Decode(r.Job)
	if err != nil {
		return nil, "", jobs.Seed{}, err
	}
	if want := submittedPrefix + info.ID().String(); key != want {
		return nil, "", jobs.Seed{}, fmt.Errorf("job %s stored under %q", info.ID(), key)
	}
	var secret jobs.Seed
	if r.Secret != "" {
		if secret, err = jobs.ParseHash(r.Secret); err != nil || jobs.CommitSeed(secret) != info.SeedCommitment {
			return nil, "", jobs.Seed{}, fmt.Errorf("job %s: the kept secret is not the job's check seed", info.ID())
		}
	}
	return info, r.State, secret, nil
}

// remember writes where job info stands to the local datastore, with its
// secret check seed while it is open.
func (c *Client) remember(ctx context.Context, info *jobs.JobInfo, state string) error {
	if c.p.Local == nil {
		return nil
	}
	c.mu.Lock()
	secret := c.secrets[info.ID()]
	c.mu.Unlock()
	b, err := encodeSubmitted(info, state, secret)
	if err != nil {
		return err
	}
	if err := c.p.Local.Put(ctx, ds.NewKey(submittedPrefix+info.ID().String()), b); err != nil {
		return fmt.Errorf("dapp: remembering job %s: %w", info.ID(), err)
	}
	if err := c.p.Local.Sync(ctx, ds.NewKey(submittedPrefix)); err != nil {
		return fmt.Errorf("dapp: remembering job %s: %w", info.ID(), err)
	}
	return nil
}

// restore reads the jobs this client submitted before a restart; the open
// ones are announced again and their ipfs:// inputs provided again.
func (c *Client) restore(ctx context.Context) error {
	if c.p.Local == nil {
		return nil
	}
	res, err := c.p.Local.Query(ctx, query.Query{Prefix: strings.TrimSuffix(submittedPrefix, "/")})
	if err != nil {
		return fmt.Errorf("dapp: reading submitted jobs: %w", err)
	}
	entries, err := res.Rest()
	if err != nil {
		return fmt.Errorf("dapp: reading submitted jobs: %w", err)
	}
	var provide []cid.Cid
	for _, e := range entries {
		info, state, secret, err := decodeSubmitted(e.Key, e.Value)
		if err != nil {
			// A damaged record loses one job's announcements, not the node.
			c.log.Warn("skipping a submitted-job record", "key", e.Key, "err", err)
			continue
		}
		id := info.ID()
		c.mine[id] = info
		if state == stateDone {
			c.toHold[id] = true
		}
		if state == stateOpen {
			if c.p.Jobs != nil {
				if err := c.p.Jobs.Join(ctx, id); err != nil {
					return fmt.Errorf("dapp: joining the store of job %s: %w", id, err)
				}
			}
			c.open[id] = info
			if !secret.IsZero() {
				c.secrets[id] = secret
			}
			for _, u := range []string{info.Code.URI, info.Data.URI} {
				if k, err := cid.Decode(strings.TrimPrefix(u, "ipfs://")); err == nil && strings.HasPrefix(u, "ipfs://") {
					provide = append(provide, k)
				}
			}
		}
	}
	if len(c.open) > 0 {
		c.log.Info("restored submitted jobs", "jobs", len(c.mine), "open", len(c.open))
	}
	c.reprovide = provide
	return nil
}

// close stops announcing job id and remembers why.
func (c *Client) close(ctx context.Context, id jobs.ID, state string) {
	c.mu.Lock()
	info := c.mine[id]
	_, open := c.open[id]
	delete(c.open, id)
	c.mu.Unlock()
	if info == nil || !open {
		return
	}
	c.stopFollowing(ctx, id, state == stateDone)
	if err := c.remember(ctx, info, state); err != nil {
		c.log.Warn("recording a finished job", "job", id, "err", err)
	}
	c.mu.Lock()
	delete(c.secrets, id)
	delete(c.revealed, id)
	c.mu.Unlock()
	if state == stateDone {
		c.holdLater(id)
	}
}

// closeFinished stops announcing the jobs that have a verdict.
func (c *Client) closeFinished(ctx context.Context) {
	c.mu.Lock()
	var ids []jobs.ID
	for id := range c.open {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	for _, id := range ids {
		if _, ok, err := c.Status(ctx, id); err == nil && ok {
			c.close(ctx, id, stateDone)
		}
	}
}

// Open reports whether job id is one this client still announces.
func (c *Client) Open(id jobs.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open[id] != nil
}
