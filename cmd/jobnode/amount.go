package main

import (
	"math/big"

	"github.com/jobmesh/jobmesh/dapp"
)

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
// dapp.MinPriceWei.
func parsePrice(s string) (*big.Int, error) {
	v, err := parseWei("price", s)
	if err != nil {
		return nil, err
	}
	if err := dapp.CheckPrice(v); err != nil {
		return nil, flagError("price", "%v", err)
	}
	return v, nil
}
