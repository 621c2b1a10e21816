package escrow

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// ErrNoSuchJob: the escrow has no JobCreated event for a key.
var ErrNoSuchJob = fmt.Errorf("escrow: no such job")

// CreatedAt returns the number of the block whose transaction created
// job key (its JobCreated event). Once the chain is final there, every
// reader gets the same answer forever.
func (c *Client) CreatedAt(ctx context.Context, key common.Hash) (uint64, error) {
	logs, err := c.logs(ctx, "JobCreated", nil, key)
	if err != nil {
		return 0, err
	}
	if len(logs) == 0 {
		return 0, fmt.Errorf("%w: %s", ErrNoSuchJob, key)
	}
	return logs[0].BlockNumber, nil
}

// StakedBy reports whether account staked (a Staked event) at or before
// block. Like CreatedAt, the answer for a final block never changes.
func (c *Client) StakedBy(ctx context.Context, account common.Address, block uint64) (bool, error) {
	logs, err := c.logs(ctx, "Staked", new(big.Int).SetUint64(block), common.BytesToHash(account.Bytes()))
	return len(logs) > 0, err
}

// logs returns the escrow's events named event whose first indexed
// topic is topic, from the first block to block to (nil: the latest).
func (c *Client) logs(ctx context.Context, event string, to *big.Int, topic common.Hash) ([]types.Log, error) {
	q := ethereum.FilterQuery{
		FromBlock: new(big.Int),
		ToBlock:   to,
		Addresses: []common.Address{c.cfg.Contract},
		Topics:    [][]common.Hash{{c.abi.Events[event].ID}, {topic}},
	}
	logs, err := retryValue(ctx, c, func() ([]types.Log, error) { return c.backend.FilterLogs(ctx, q) })
	c.metrics.read("logs", err)
	return logs, err
}
