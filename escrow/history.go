package escrow

import (
	"cmp"
	"context"
	"fmt"
	"math/big"
	"slices"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// ErrNoSuchJob: the escrow has no JobCreated event for a key.
var ErrNoSuchJob = fmt.Errorf("escrow: no such job")

// CreatedAt returns the number and hash of the block whose transaction
// created job key (its JobCreated event). Once the chain is final there, every
// reader gets the same answer forever.
func (c *Client) CreatedAt(ctx context.Context, key common.Hash) (uint64, common.Hash, error) {
	logs, err := c.logs(ctx, "JobCreated", nil, key)
	if err != nil {
		return 0, common.Hash{}, err
	}
	if len(logs) == 0 {
		return 0, common.Hash{}, fmt.Errorf("%w: %s", ErrNoSuchJob, key)
	}
	return logs[0].BlockNumber, logs[0].BlockHash, nil
}

// ActiveStakeAt is account's active stake as of the end of block, replayed
// from its Staked, UnstakeRequested and Slashed events: what it could
// join a job with then. Like CreatedAt, the answer for a final block
// never changes.
func (c *Client) ActiveStakeAt(ctx context.Context, account common.Address, block uint64) (*big.Int, error) {
	to, topic := new(big.Int).SetUint64(block), common.BytesToHash(account.Bytes())
	staked, err := c.logs(ctx, "Staked", to, topic)
	if err != nil {
		return nil, err
	}
	unstaked, err := c.logs(ctx, "UnstakeRequested", to, topic)
	if err != nil {
		return nil, err
	}
	slashed, err := c.logsBy(ctx, to, [][]common.Hash{{c.abi.Events["Slashed"].ID}, nil, {topic}})
	if err != nil {
		return nil, err
	}
	all := slices.Concat(staked, unstaked, slashed)
	slices.SortFunc(all, func(a, b types.Log) int {
		return cmp.Or(cmp.Compare(a.BlockNumber, b.BlockNumber), cmp.Compare(a.Index, b.Index))
	})
	active := new(big.Int)
	for i := range all {
		l := &all[i]
		switch l.Topics[0] {
		case c.abi.Events["Staked"].ID:
			e, err := c.bindings.UnpackStakedEvent(l)
			if err != nil {
				return nil, err
			}
			active.Set(e.Total)
		case c.abi.Events["UnstakeRequested"].ID:
			e, err := c.bindings.UnpackUnstakeRequestedEvent(l)
			if err != nil {
				return nil, err
			}
			active.Sub(active, e.Amount)
		default:
			active.SetInt64(0)
		}
	}
	return active, nil
}

// logs returns the escrow's events named event whose first indexed
// topic is topic, from the first block to block to (nil: the latest).
func (c *Client) logs(ctx context.Context, event string, to *big.Int, topic common.Hash) ([]types.Log, error) {
	return c.logsBy(ctx, to, [][]common.Hash{{c.abi.Events[event].ID}, {topic}})
}

// logsBy returns the escrow's logs matching topics, from the first block
// to block to (nil: the latest).
func (c *Client) logsBy(ctx context.Context, to *big.Int, topics [][]common.Hash) ([]types.Log, error) {
	q := ethereum.FilterQuery{
		FromBlock: new(big.Int),
		ToBlock:   to,
		Addresses: []common.Address{c.cfg.Contract},
		Topics:    topics,
	}
	logs, err := retryValue(ctx, c, func() ([]types.Log, error) { return c.backend.FilterLogs(ctx, q) })
	c.metrics.read("logs", err)
	return logs, err
}
