package settlement

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strings"

	ethcrypto "github.com/ethereum/go-ethereum/crypto"

	"github.com/jobmesh/jobmesh/escrow"
)

// ErrWalletKey: the key that signs settlements is missing or is not the
// configured wallet's.
var ErrWalletKey = errors.New("settlement: wallet key does not match the wallet")

// CheckWalletKey checks that key, which signs the settlements, is the key
// of wallet (a 0x address, lower case): the escrow counts a signature by
// the address it recovers to.
func CheckWalletKey(key *ecdsa.PrivateKey, wallet string) error {
	if key == nil {
		return fmt.Errorf("%w: a chain needs the wallet key", ErrWalletKey)
	}
	if addr := strings.ToLower(ethcrypto.PubkeyToAddress(key.PublicKey).Hex()); addr != wallet {
		return fmt.Errorf("%w: wallet key is %s, configured wallet %s", ErrWalletKey, addr, wallet)
	}
	return nil
}

// Quorum reports whether signed member signatures settle job j as the
// contract counts them: signed · den ≥ members · num, and signed ≥ the
// creator's minimum of signers. Without a quorum fraction (nil num or
// den) every member must sign.
func Quorum(signed int, j escrow.Job, num, den *big.Int) bool {
	if j.Members == 0 || signed < int(j.Terms.MinSigners) {
		return false
	}
	if num == nil || den == nil {
		return signed >= j.Members
	}
	l := new(big.Int).Mul(big.NewInt(int64(signed)), den)
	r := new(big.Int).Mul(big.NewInt(int64(j.Members)), num)
	return l.Cmp(r) >= 0
}

// Same reports whether a and b are one settlement (the same digest in any
// domain).
func Same(a, b escrow.Settlement) bool {
	return a.Digest(escrow.Domain{}) == b.Digest(escrow.Domain{})
}
