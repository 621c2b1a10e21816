package main

import (
	"math/big"
)

// minPriceWei is the least price job submit accepts: 21000 gas (one plain
// transfer) at 1 gwei a gas. A processor takes its pay out with a
// transaction, so a job that pays less in all costs those who run it more
// than it pays them, and no processor has a reason to take it.
var minPriceWei = big.NewInt(21_000 * 1_000_000_000)

// parseWei reads the amount in wei given to flag --name: a decimal
// integer, or an exact scientific form such as 1e18. Every flag that takes
// an amount reads it here, so one notation works for all.
func parseWei(name, s string) (*big.Int, error) {
	if s == "" {
		return nil, flagError(name, "missing: give an amount in wei, e.g. 1000000000000000 or 1e15")
	}
	if v, ok := new(big.Int).SetString(s, 10); ok {
		if v.Sign() <= 0 {
			return nil, flagError(name, "%s must be positive", s)
		}
		return v, nil
	}
	f, ok := new(big.Float).SetPrec(512).SetString(s)
	if !ok || !f.IsInt() || f.Sign() <= 0 {
		return nil, flagError(name, "%q: want a positive whole number of wei, e.g. 1000000000000000000 or 1e18", s)
	}
	v, _ := f.Int(nil)
	return v, nil
}

// parsePrice reads --price: an amount as parseWei reads it, at least
// minPriceWei.
func parsePrice(s string) (*big.Int, error) {
	v, err := parseWei("price", s)
	if err != nil {
		return nil, err
	}
	if v.Cmp(minPriceWei) < 0 {
		return nil, flagError("price", "%s wei is below the floor of %s wei (2.1e13): a processor pays about that "+
			"(21000 gas at 1 gwei) to take its pay out, so a smaller price pays nobody to run the job", v, minPriceWei)
	}
	return v, nil
}
