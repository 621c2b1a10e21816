package membership

import (
	"context"
	"math/big"
	"sync"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
)

// StakeHistory reads when a job's escrow was created, an account's
// active stake as of a block, and the stake a join needs; *escrow.Client
// is one.
type StakeHistory interface {
	CreatedAt(ctx context.Context, key common.Hash) (uint64, common.Hash, error)
	ActiveStakeAt(ctx context.Context, account common.Address, block uint64) (*big.Int, error)
	MinStake(ctx context.Context) (*big.Int, error)
}

var _ StakeHistory = (*escrow.Client)(nil)

// Stakers says which wallets held at least the minimum stake at the
// block that created a job: only their processors may re-run the job's
// blocks. A key generated after
// the job was announced cannot be one of them, so no one can search for
// keys that rank first in a block's rerun order and stake them. The
// answers are about final blocks, so every reader gets the same ones and
// they are cached; each cache starts over past maxMemberships. It is safe
// for concurrent use.
type Stakers struct {
	chain StakeHistory

	mu      sync.Mutex
	min     *big.Int
	created map[common.Hash]creation
	staked  map[stakedKey]bool
}

type creation struct {
	block uint64
	hash  common.Hash
}

type stakedKey struct {
	account common.Address
	block   uint64
}

// NewStakers returns a cache over chain.
func NewStakers(chain StakeHistory) *Stakers {
	return &Stakers{chain: chain, created: map[common.Hash]creation{}, staked: map[stakedKey]bool{}}
}

// CreatedIn returns the hash of the block that created the escrow of job
// info: nobody knew it when the job's ID was chosen.
func (s *Stakers) CreatedIn(ctx context.Context, info *jobs.JobInfo) (common.Hash, error) {
	c, err := s.creation(ctx, info)
	return c.hash, err
}

func (s *Stakers) creation(ctx context.Context, info *jobs.JobInfo) (creation, error) {
	key := EscrowKey(info)
	s.mu.Lock()
	c, ok := s.created[key]
	s.mu.Unlock()
	if ok {
		return c, nil
	}
	block, hash, err := s.chain.CreatedAt(ctx, key)
	if err != nil {
		return creation{}, err
	}
	c = creation{block, hash}
	s.mu.Lock()
	if len(s.created) >= maxMemberships {
		s.created = map[common.Hash]creation{}
	}
	s.created[key] = c
	s.mu.Unlock()
	return c, nil
}

// StakedBefore reports whether wallet held at least the minimum stake at
// the block that created the escrow of job info.
func (s *Stakers) StakedBefore(ctx context.Context, info *jobs.JobInfo, wallet common.Address) (bool, error) {
	c, err := s.creation(ctx, info)
	if err != nil {
		return false, err
	}
	block := c.block
	k := stakedKey{wallet, block}
	s.mu.Lock()
	yes, ok := s.staked[k]
	s.mu.Unlock()
	if ok {
		return yes, nil
	}
	s.mu.Lock()
	min := s.min
	s.mu.Unlock()
	if min == nil {
		m, err := s.chain.MinStake(ctx)
		if err != nil {
			return false, err
		}
		min = m
		s.mu.Lock()
		s.min = m
		s.mu.Unlock()
	}
	active, err := s.chain.ActiveStakeAt(ctx, wallet, block)
	if err != nil {
		return false, err
	}
	yes = active.Cmp(min) >= 0
	s.mu.Lock()
	if len(s.staked) >= maxMemberships {
		s.staked = map[stakedKey]bool{}
	}
	s.staked[k] = yes
	s.mu.Unlock()
	return yes, nil
}
