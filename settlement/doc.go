// Package settlement pays a finished job on the escrow contract. Every
// member of the job derives the settlement its verdict implies
// (DeriveSettlement, a pure function of the verdict record, the job and
// the mesh's dispatch config), so members that recomputed the same verdict
// derive byte-identical settlements and their signatures add up. A
// Settler drives one job's settlement a step at a time: the finalizer
// proposes, members that derive the same settlement sign, and once a
// quorum of members has signed (as the contract counts it, Quorum) and
// the quiet period after the job's last join is over, the finalizer (or,
// after a wait, any member that signed) submits it.
//
// The Settler does no judging: what verdict a processor stands behind,
// which wallets are bound and which are members come through the small
// interfaces at the top of settler.go.
package settlement
