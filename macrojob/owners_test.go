package macrojob_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/jobmesh/jobmesh/macrojob"
	"github.com/jobmesh/jobmesh/records"
)

func peers(n int) []string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprintf("peer-%03d", i)
	}
	return ps
}

func indexes(n int) []uint64 {
	ms := make([]uint64, n)
	for i := range ms {
		ms[i] = uint64(i)
	}
	return ms
}

// top is the processor plain rendezvous hashing names for MacroJob m.
func top(job string, m uint64, procs []string) string {
	var best string
	var bh [32]byte
	for _, p := range procs {
		if h := records.RankHash(p, job, strconv.FormatUint(m, 10)); best == "" || bytes.Compare(h[:], bh[:]) > 0 {
			best, bh = p, h
		}
	}
	return best
}

// TestFirstOwnersSpread: no processor is named for more than its share of
// the MacroJobs, so with as many processors as MacroJobs each has an owner
// of its own, where plain rendezvous hashing names some processors twice.
func TestFirstOwnersSpread(t *testing.T) {
	for _, c := range []struct{ procs, macros int }{{100, 37}, {37, 37}, {20, 37}, {4, 3}, {3, 10}, {1, 5}} {
		t.Run(fmt.Sprintf("p%d-m%d", c.procs, c.macros), func(t *testing.T) {
			job, procs, macros := "job-"+strconv.Itoa(c.procs), peers(c.procs), indexes(c.macros)
			owners := macrojob.FirstOwners(job, macros, procs)
			most := (c.macros + c.procs - 1) / c.procs
			named := map[string]int{}
			for i, o := range owners {
				if !slices.Contains(procs, o) {
					t.Fatalf("MacroJob %d named %q, not a processor", i, o)
				}
				named[o]++
			}
			for p, n := range named {
				if n > most {
					t.Fatalf("%s named for %d MacroJobs, more than its share %d", p, n, most)
				}
			}
			if want := min(c.procs, c.macros); len(named) != want {
				t.Fatalf("%d processors named, want %d", len(named), want)
			}
			if owners[0] != top(job, macros[0], procs) {
				t.Fatalf("the first MacroJob's owner %s is not the highest in rank", owners[0])
			}
		})
	}
	// The spread changes something: with 100 processors and 37 MacroJobs,
	// plain rendezvous hashing names some processor twice for some job.
	twice := false
	for j := 0; j < 20 && !twice; j++ {
		job, procs, macros := "job-"+strconv.Itoa(j), peers(100), indexes(37)
		seen := map[string]bool{}
		for _, m := range macros {
			p := top(job, m, procs)
			twice = twice || seen[p]
			seen[p] = true
		}
	}
	if !twice {
		t.Fatal("plain rendezvous hashing named nobody twice in 20 jobs: the test shows nothing")
	}
}

// TestFirstOwnersAgree: every node names the same owners whatever order it
// holds the processors in.
func TestFirstOwnersAgree(t *testing.T) {
	procs, macros := peers(50), indexes(37)
	want := macrojob.FirstOwners("job", macros, procs)
	r := rand.New(rand.NewPCG(1, 2))
	for range 10 {
		shuffled := slices.Clone(procs)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if got := macrojob.FirstOwners("job", macros, shuffled); !slices.Equal(got, want) {
			t.Fatalf("owners differ with the processors in another order:\n%v\n%v", got, want)
		}
	}
	if got := macrojob.FirstOwners("job", macros, nil); len(got) != len(macros) || got[0] != "" {
		t.Fatalf("no processors: %v", got)
	}
}

// TestOrder: the first owner comes first, the others follow by hash, and
// Rank, Before and Claims agree.
func TestOrder(t *testing.T) {
	procs, macros := peers(30), indexes(12)
	owners := macrojob.FirstOwners("job", macros, procs)
	for i, m := range macros {
		o := macrojob.NewOrder("job", m, owners[i])
		cs := make([]macrojob.RoomClaim, len(procs))
		for k, p := range procs {
			cs[k] = macrojob.RoomClaim{Peer: p}
		}
		self := procs[len(procs)/2]
		o.Claims(cs, self)
		sorted := make([]string, len(cs))
		for k, c := range cs {
			sorted[k] = c.Peer
			if c.Ahead != o.Before(c.Peer, self) {
				t.Fatalf("MacroJob %d: claim of %s marked ahead %v of %s", m, c.Peer, c.Ahead, self)
			}
		}
		if sorted[0] != owners[i] {
			t.Fatalf("MacroJob %d: %s first, want its owner %s", m, sorted[0], owners[i])
		}
		for k, p := range sorted {
			if r := o.Rank(p, procs); r != k {
				t.Fatalf("MacroJob %d: %s ranks %d, sorted at %d", m, p, r, k)
			}
			for _, q := range sorted[k+1:] {
				if !o.Before(p, q) || o.Before(q, p) {
					t.Fatalf("MacroJob %d: Before(%s, %s) disagrees with the sort", m, p, q)
				}
			}
		}
		idx := strconv.FormatUint(m, 10)
		for k := 1; k+1 < len(sorted); k++ {
			a, b := records.RankHash(sorted[k], "job", idx), records.RankHash(sorted[k+1], "job", idx)
			if bytes.Compare(a[:], b[:]) <= 0 {
				t.Fatalf("MacroJob %d: after the owner, %s before %s by a lower hash", m, sorted[k], sorted[k+1])
			}
		}
	}
}
