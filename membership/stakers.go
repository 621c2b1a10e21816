package membership

import (
	"context"
	"sync"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
)

// StakeHistory reads when a job's escrow was created and whether an
// account had staked by a block; *escrow.Client is one.
type StakeHistory interface {
	CreatedAt(ctx context.Context, key common.Hash) (uint64, error)
	StakedBy(ctx context.Context, account common.Address, block uint64) (bool, error)
}

var _ StakeHistory = (*escrow.Client)(nil)

// Stakers says which wallets had staked by the block that created a job:
// only their processors may re-run the job's blocks. A key generated after
// the job was announced cannot be one of them, so no one can search for
// keys that rank first in a block's rerun order and stake them. The
// answers are about final blocks, so every reader gets the same ones and
// they are cached; each cache starts over past maxMemberships. It is safe
// for concurrent use.
type Stakers struct {
	chain StakeHistory

	mu      sync.Mutex
	created map[common.Hash]uint64
	staked  map[stakedKey]bool
}

type stakedKey struct {
	account common.Address
	block   uint64
}

// NewStakers returns a cache over chain.
func NewStakers(chain StakeHistory) *Stakers {
	return &Stakers{chain: chain, created: map[common.Hash]uint64{}, staked: map[stakedKey]bool{}}
}

// StakedBefore reports whether wallet had staked by the block that
// created the escrow of job info.
func (s *Stakers) StakedBefore(ctx context.Context, info *jobs.JobInfo, wallet common.Address) (bool, error) {
	key := EscrowKey(info)
	s.mu.Lock()
	block, ok := s.created[key]
	s.mu.Unlock()
	if !ok {
		b, err := s.chain.CreatedAt(ctx, key)
		if err != nil {
			return false, err
		}
		block = b
		s.mu.Lock()
		if len(s.created) >= maxMemberships {
			s.created = map[common.Hash]uint64{}
		}
		s.created[key] = block
		s.mu.Unlock()
	}
	k := stakedKey{wallet, block}
	s.mu.Lock()
	yes, ok := s.staked[k]
	s.mu.Unlock()
	if ok {
		return yes, nil
	}
	yes, err := s.chain.StakedBy(ctx, wallet, block)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	if len(s.staked) >= maxMemberships {
		s.staked = map[stakedKey]bool{}
	}
	s.staked[k] = yes
	s.mu.Unlock()
	return yes, nil
}
