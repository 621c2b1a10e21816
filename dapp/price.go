package dapp

import (
	"errors"
	"fmt"
	"math/big"
)

// ErrPriceBelowFloor: a job's price is below MinPriceWei.
var ErrPriceBelowFloor = errors.New("dapp: price below the floor")

// minPriceWei: 21000 gas (one plain transfer) at 1 gwei a gas.
var minPriceWei = big.NewInt(21_000 * 1_000_000_000)

// MinPriceWei is the least price a job may be submitted at, through the
// CLI and the API alike: 21000 gas (one plain transfer) at 1 gwei a gas.
// A processor takes its pay out with a transaction, so a job that pays
// less in all costs those who run it more than it pays them, and no
// processor has a reason to take it. The result is a copy.
func MinPriceWei() *big.Int { return new(big.Int).Set(minPriceWei) }

// CheckPrice returns an error that is ErrPriceBelowFloor when price is
// below MinPriceWei; its message says why, for the flag or field named
// by the caller.
func CheckPrice(price *big.Int) error {
	if price.Cmp(minPriceWei) < 0 {
		return belowFloor{new(big.Int).Set(price)}
	}
	return nil
}

type belowFloor struct{ price *big.Int }

func (e belowFloor) Error() string {
	return fmt.Sprintf("%s wei is below the floor of %s wei (2.1e13): a processor pays about that "+
		"(21000 gas at 1 gwei) to take its pay out, so a smaller price pays nobody to run the job", e.price, minPriceWei)
}

func (e belowFloor) Is(target error) bool { return target == ErrPriceBelowFloor }
