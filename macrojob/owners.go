package macrojob

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/jobmesh/jobmesh/records"
)

// First owners. Each MacroJob's room is opened by its first owner, and a
// processor opens one room at a time: a processor named for two MacroJobs
// while another is named for none leaves the second to a claim after the
// head start, one Job channel message to every processor of the job and an
// answer from whoever opened it meanwhile. So the names are spread: by
// rendezvous hashing (records.RankHash of processor, job and MacroJob
// index), but with each processor named for at most ⌈MacroJobs ÷
// processors⌉ of them. MacroJobs are named in plan order, each taking the
// highest-ranked processor that has a name left; with at least as many
// processors as MacroJobs every MacroJob has a first owner of its own.
// The price is robustness to views that differ: one processor missing
// from a view names other first owners there for about 0.5 of 37
// MacroJobs among 100 processors (plain rendezvous hashing: 0.4), 1.3
// among 50 (0.7), 4.5 among 20 (1.9), and about 17 where the missing
// processor changes the share (37 processors; plain: 1). Two processors
// that both take themselves for a room's first owner open it twice until
// one hears the other's lock or announcement. Naming each processor once
// and the rest by plain rendezvous hashing agreed better (4.3 among 20
// and 37 processors) but ran a job of 20 processors slower than plain
// rendezvous hashing: a processor named three or four times left its
// rooms to claims again.
//
// The order in which a MacroJob's room is left to the others is its first
// owner, then the rest by hash, highest first (Order).

// FirstOwners names the first owner of each MacroJob of job (by index)
// among procs, spread as above. Every node that holds the same procs, in
// any order, names the same owners; none when procs is empty.
func FirstOwners(job string, macros []uint64, procs []string) []string {
	owners := make([]string, len(macros))
	if len(procs) == 0 {
		return owners
	}
	most := (len(macros) + len(procs) - 1) / len(procs)
	named := make(map[string]int, len(procs))
	for i, m := range macros {
		idx := strconv.FormatUint(m, 10)
		var best [32]byte
		for _, p := range procs {
			if named[p] >= most {
				continue
			}
			if h := records.RankHash(p, job, idx); owners[i] == "" || bytes.Compare(h[:], best[:]) > 0 {
				owners[i], best = p, h
			}
		}
		named[owners[i]]++
	}
	return owners
}

// Order is how MacroJob macro of job ranks its processors after its first
// owner owner (FirstOwners): by hash, highest first. Rank(p) is p's place:
// 0 for the owner, k ≥ 1 for the k-th after it; Before(a, b) reports
// whether a comes before b; Claims sorts claims by it.
type Order struct {
	owner string
	job   string
	idx   string
}

// NewOrder returns the order of MacroJob macro of job whose first owner
// is owner.
func NewOrder(job string, macro uint64, owner string) Order {
	return Order{owner: owner, job: job, idx: strconv.FormatUint(macro, 10)}
}

// Before reports whether a comes before b in o.
func (o Order) Before(a, b string) bool {
	switch {
	case a == b:
		return false
	case a == o.owner:
		return true
	case b == o.owner:
		return false
	}
	ha, hb := o.hash(a), o.hash(b)
	return bytes.Compare(ha[:], hb[:]) > 0
}

// hash is p's rendezvous hash for o's MacroJob.
func (o Order) hash(p string) [32]byte { return records.RankHash(p, o.job, o.idx) }

// Rank is p's place in o among procs (p need not be one of them): 0 for
// the owner, else 1 + how many of procs other than the owner come before p.
func (o Order) Rank(p string, procs []string) int {
	if p == o.owner {
		return 0
	}
	n, hp := 1, o.hash(p)
	for _, q := range procs {
		if hq := o.hash(q); q != o.owner && q != p && bytes.Compare(hq[:], hp[:]) > 0 {
			n++
		}
	}
	return n
}

// Claims sorts cs in o, first first, and marks each claim Ahead when its
// claimant comes before self.
func (o Order) Claims(cs []RoomClaim, self string) {
	type keyed struct {
		c     RoomClaim
		owner bool
		h     [32]byte
	}
	ks := make([]keyed, len(cs))
	for i, c := range cs {
		ks[i] = keyed{c, c.Peer == o.owner, o.hash(c.Peer)}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if a.owner != b.owner {
			if a.owner {
				return -1
			}
			return 1
		}
		return bytes.Compare(b.h[:], a.h[:])
	})
	for i, k := range ks {
		k.c.Ahead = o.Before(k.c.Peer, self)
		cs[i] = k.c
	}
}
