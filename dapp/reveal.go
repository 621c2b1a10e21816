package dapp

import (
	"context"
	"crypto/ecdsa"
	"strings"
	"time"

	ethcrypto "github.com/ethereum/go-ethereum/crypto"

	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// revealEvery is how often the client looks whether an open job's
// regular MicroJobs are all committed.
const revealEvery = time.Second

// The check seed of a job is this node's secret until every regular
// MicroJob of the job has a commitment (docs/ARCHITECTURE.md, "Hidden
// checks"): then the client publishes it in a reveal record signed by the
// creator's wallet, and the processors draw the verifiers from it. Until
// then nobody can tell which blocks will be checked. A client that stays
// silent past the processors' RevealTimeout leaves its job to the lapse
// seed, and its escrow pays all the same.

// canReveal reports whether this node holds the wallet key of info's
// creator, which signs the reveal.
func (c *Client) canReveal(info *jobs.JobInfo) bool {
	return c.creatorKey(info) != nil
}

// creatorKey is the node's wallet key when it is info's creator, else nil.
func (c *Client) creatorKey(info *jobs.JobInfo) *ecdsa.PrivateKey {
	k := c.p.WalletKey
	if k == nil || jobs.Address(ethcrypto.PubkeyToAddress(k.PublicKey)) != info.Creator {
		return nil
	}
	return k
}

func (c *Client) revealLoop(ctx context.Context) {
	defer c.wg.Done()
	t := time.NewTicker(revealEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.revealDue(ctx)
		}
	}
}

// revealDue reveals the check seed of every open job of this client whose
// regular MicroJobs are all committed.
func (c *Client) revealDue(ctx context.Context) {
	type due struct {
		info   *jobs.JobInfo
		secret jobs.Seed
	}
	var todo []due
	c.mu.Lock()
	for id, info := range c.open {
		if s, ok := c.secrets[id]; ok && !c.revealed[id] {
			todo = append(todo, due{info, s})
		}
	}
	c.mu.Unlock()
	for _, d := range todo {
		if ctx.Err() != nil {
			return
		}
		if err := c.reveal(ctx, d.info, d.secret); err != nil {
			c.log.Warn("revealing a job's check seed", "job", d.info.ID(), "err", err)
		}
	}
}

// reveal publishes info's check seed once the store holds a commitment of
// every regular MicroJob of it.
func (c *Client) reveal(ctx context.Context, info *jobs.JobInfo, secret jobs.Seed) error {
	id := info.ID()
	key := c.creatorKey(info)
	if key == nil {
		return nil // warned at submit
	}
	plan, err := jobs.Slice(info)
	if err != nil {
		return err
	}
	rs, err := c.p.Store.QueryKeys(ctx, records.JobKey(id)+"/macro/", func(k string) bool { return strings.Contains(k, "/commit/") })
	if err != nil {
		return err
	}
	// Commitments count as the processors count them (finish.Progress):
	// each regular MicroJob has one, whoever wrote it.
	if !finish.ProgressOf(finish.FromRecords(id, rs), 1).RegularsCommitted(plan) {
		return nil
	}
	rec, err := records.SignReveal(id, secret, key)
	if err != nil {
		return err
	}
	if err := c.p.Store.Put(ctx, records.RevealKey(id, c.p.Host.ID().String()), records.RevealType, rec); err != nil {
		return err
	}
	c.mu.Lock()
	c.revealed[id] = true
	c.mu.Unlock()
	c.m.revealed.Inc()
	c.log.Info("check seed revealed", "job", id)
	return nil
}
