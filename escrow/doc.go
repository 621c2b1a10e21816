// Package escrow holds the settlement contract, its Go client and the embedded
// development chain.
package escrow
