package membership

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
)

// MemberReader reads escrow membership.
type MemberReader interface {
	IsMember(ctx context.Context, key common.Hash, account common.Address) (bool, error)
}

var _ MemberReader = (*escrow.Client)(nil)

// maxMemberships bounds each of the answer caches; past it a cache
// starts over.
const maxMemberships = 1 << 16

// Members caches a chain's membership answers. It is safe for concurrent
// use.
type Members struct {
	chain   MemberReader
	backoff time.Duration
	now     func() time.Time

	mu  sync.Mutex
	yes map[memberKey]struct{}
	no  map[memberKey]recheck
	// version changes whenever an answer that filtering depends on does.
	version uint64
}

type memberKey struct {
	key     common.Hash
	account common.Address
}

// recheck is a no: when to ask again, and the wait that led there.
type recheck struct {
	next time.Time
	wait time.Duration
}

// NewMembers returns a cache over chain; a no is asked again after
// backoff, doubling up to 32 × backoff (a non-positive backoff means 2s).
func NewMembers(chain MemberReader, backoff time.Duration) *Members {
	if backoff <= 0 {
		backoff = 2 * time.Second
	}
	return &Members{chain: chain, backoff: backoff, now: time.Now,
		yes: map[memberKey]struct{}{}, no: map[memberKey]recheck{}}
}

// IsMember reports whether account is a member of job key: a yes from
// the cache, a no from the cache until its recheck is due, else the
// chain's answer. A recheck the chain does not answer keeps the no; only
// a first read returns the chain's error.
func (m *Members) IsMember(ctx context.Context, key common.Hash, account common.Address) (bool, error) {
	k := memberKey{key, account}
	now := m.now()
	m.mu.Lock()
	if _, ok := m.yes[k]; ok {
		m.mu.Unlock()
		return true, nil
	}
	r, seen := m.no[k]
	if seen && now.Before(r.next) {
		m.mu.Unlock()
		return false, nil
	}
	m.mu.Unlock()
	ok, err := m.chain.IsMember(ctx, key, account)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil && seen {
		// The no stands until a read says otherwise; ask again after
		// the same wait.
		m.no[k] = recheck{next: now.Add(r.wait), wait: r.wait}
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("membership: reading whether %s is a member of job %s: %w", account, key, err)
	}
	if ok {
		m.joinedLocked(k)
		return true, nil
	}
	if !seen {
		m.version++
	}
	if len(m.no) >= maxMemberships {
		clear(m.no)
	}
	wait := min(max(2*r.wait, m.backoff), 32*m.backoff)
	m.no[k] = recheck{next: now.Add(wait), wait: wait}
	return false, nil
}

// Joined records that account is a member of job key (its own join
// succeeded).
func (m *Members) Joined(key common.Hash, account common.Address) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.joinedLocked(memberKey{key, account})
}

func (m *Members) joinedLocked(k memberKey) {
	if _, ok := m.yes[k]; ok {
		return
	}
	if len(m.yes) >= maxMemberships {
		clear(m.yes)
	}
	m.yes[k] = struct{}{}
	delete(m.no, k)
	m.version++
}

// Version changes whenever an answer that filtering by membership
// depends on does, so a cache of filtered records stays valid while it
// is unchanged.
func (m *Members) Version() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.version
}

// KeepMembers is, for a reader of the store (a DApp), the rule processors
// with a chain judge a job's disclosures by: one counts when its wallet
// is its author's bound wallet (a binding record in store that verifies)
// and a member of the job's escrow. A reader that judges without it finds
// no verdict that follows from the records once processors left a
// disclosure out. (Processors keep, per peer, the newest binding they
// verified; a reader takes the one store holds now. They differ only
// while a forged value hides a binding: see "Wallet binding".)
func KeepMembers(store crdt.Getter, members *Members) func(ctx context.Context, info *jobs.JobInfo, d microjob.Disclosure) (bool, error) {
	bound := StoreBindings(store)
	return func(ctx context.Context, info *jobs.JobInfo, d microjob.Disclosure) (bool, error) {
		wallet, ok, err := bound(ctx, d.Processor)
		if err != nil || !ok || wallet != d.Wallet { // a binding that verifies holds a lower-case wallet
			return false, err
		}
		a, err := microjob.ParseWallet(d.Wallet)
		if err != nil {
			return false, nil
		}
		return members.IsMember(ctx, EscrowKey(info), a)
	}
}

// EscrowKey is a job's key on chain: its ID bound to its creator, so only
// the creator's own escrow counts as the job's.
func EscrowKey(info *jobs.JobInfo) common.Hash {
	return escrow.JobKey(common.Address(info.Creator), common.Hash(info.ID()))
}
