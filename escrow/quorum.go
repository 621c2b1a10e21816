package escrow

import (
	"context"
	"math/big"
)

// Quorum reads the share of a job's members that must sign its settlement:
// numerator / denominator.
func (c *Client) Quorum(ctx context.Context) (num, den *big.Int, err error) {
	num, err = call(ctx, c, c.bindings.PackQuorumNumerator(), c.bindings.UnpackQuorumNumerator)
	if err != nil {
		return nil, nil, err
	}
	den, err = call(ctx, c, c.bindings.PackQuorumDenominator(), c.bindings.UnpackQuorumDenominator)
	if err != nil {
		return nil, nil, err
	}
	return num, den, nil
}
