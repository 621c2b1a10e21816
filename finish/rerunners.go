package finish

import (
	"bytes"
	"cmp"
	"slices"
	"strconv"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// Who re-runs a disputed or self-checked block is not the writer's
// choice. Each block has a rerun order: the candidates every reader holds
// eligible (Records.Candidates) less the block's sides, one place per key
// (a stake's wallet), ranked by a hash of the key, the job, the request
// kind and the block (RerunOrder). A request asks a prefix of that order,
// one peer of each place: the re-runners it names and those it dropped
// are exactly the first places, and it may say the order is exhausted only
// when it asked every place. A reader refuses a request that skips a
// place, names a processor that is not a candidate or two of one place, or
// claims exhaustion early (validOrder), so a writer colluding with liars
// cannot pick them as re-runners; it can only say a re-runner is silent,
// and Rule counts a silent re-runner as a vote against whichever hash
// leads, so that drops cannot tip a vote.

// Candidate is a processor a reader holds eligible to re-run a block, and
// the key it ranks by: with a chain its bound wallet, so that one stake
// is one place in the order however many peers it binds; without one its
// peer ID. Salt is mixed into its rank: with a chain the hash of the block
// that created the job's escrow, which nobody knew when the job's ID was
// chosen, so that a creator cannot search job IDs for orders that rank its
// partners first; empty without a chain. A reader gives every candidate
// of a job the same salt.
type Candidate struct{ Peer, Key, Salt string }

// PeerCandidates are peers as candidates ranked by their own IDs (a mesh
// without a chain).
func PeerCandidates(peers []string) []Candidate {
	out := make([]Candidate, len(peers))
	for i, p := range peers {
		out[i] = Candidate{Peer: p, Key: p}
	}
	return out
}

// Slot is one place of a rerun order: a key and its candidates' peers,
// sorted.
type Slot struct {
	Key   string
	Peers []string
}

// RerunOrder is the rerun order of block for a request of kind
// (records.DisputeType, records.CheckType) in job id: the keys of cands,
// less the sides' keys, highest rank hash first (then by key). The rank
// hash is RankHash(key, job, kind, block, "rerun"[, salt]).
func RerunOrder(id jobs.ID, kind string, block uint64, cands []Candidate, sides []string) []Slot {
	type ranked struct {
		Slot
		h [32]byte
	}
	excluded := slices.Clone(sides)
	for _, c := range cands {
		if slices.Contains(sides, c.Peer) {
			excluded = append(excluded, c.Key)
		}
	}
	job, b := id.String(), strconv.FormatUint(block, 10)
	var rs []ranked
	for _, c := range cands {
		if slices.Contains(excluded, c.Key) {
			continue
		}
		if i := slices.IndexFunc(rs, func(r ranked) bool { return r.Key == c.Key }); i >= 0 {
			if !slices.Contains(rs[i].Peers, c.Peer) {
				rs[i].Peers = append(rs[i].Peers, c.Peer)
			}
			continue
		}
		parts := []string{c.Key, job, kind, b, "rerun"}
		if c.Salt != "" {
			parts = append(parts, c.Salt)
		}
		rs = append(rs, ranked{Slot{Key: c.Key, Peers: []string{c.Peer}}, records.RankHash(parts...)})
	}
	slices.SortFunc(rs, func(x, y ranked) int { return cmp.Or(bytes.Compare(y.h[:], x.h[:]), cmp.Compare(x.Key, y.Key)) })
	out := make([]Slot, len(rs))
	for i, r := range rs {
		slices.Sort(r.Peers)
		out[i] = r.Slot
	}
	return out
}

// validOrder reports whether request q asks a prefix of its block's rerun
// order over cands, one peer of each place, and says exhausted only when
// it asked all of it.
func validOrder(id jobs.ID, q *Request, cands []Candidate) bool {
	named, dropped := q.Rerunners()
	var sides []string
	if q.Dispute != nil {
		sides = q.Dispute.Dispute.Processors[:]
	} else {
		sides = []string{q.Check.Processor}
	}
	order := RerunOrder(id, q.Kind(), q.Block(), cands, sides)
	var peers, asked []string // asked: the places' keys
	for _, p := range append(slices.Clone(named), dropped...) {
		if !slices.Contains(peers, p) {
			peers = append(peers, p)
		}
	}
	for _, p := range peers {
		i := slices.IndexFunc(order, func(s Slot) bool { return slices.Contains(s.Peers, p) })
		if i < 0 || slices.Contains(asked, order[i].Key) {
			return false // not a candidate, a side, or a second peer of one place
		}
		asked = append(asked, order[i].Key)
	}
	if len(asked) > len(order) || q.exhausted() && len(asked) != len(order) {
		return false
	}
	for _, s := range order[:len(asked)] {
		if !slices.Contains(asked, s.Key) {
			return false
		}
	}
	return true
}

// round is the re-runners of a request as a finalizer changes them.
type round struct {
	named, dropped []string
	exhausted      bool
	dropping       bool // silence dropped someone
	changed        bool
}

// next moves rd on after ruling r on a block with sides: silent named
// re-runners are dropped (keeping at least keep named), the ruling is made
// again with them dropped, and an escalating ruling asks the next
// re-runners of order (draw).
func (e Escalation) next(rd *round, sides []string, r Ruling, silent []string, keep int, order []Slot, unable func(string) bool) {
	rd.silence(silent, keep)
	if rd.dropping {
		asked, n := rd.asked(), 0
		for _, p := range rd.dropped {
			if !slices.ContainsFunc(r.Votes, func(v microjob.Vote) bool { return v.Processor == p }) {
				n++
			}
		}
		r = e.rule(sides, len(asked), r.Votes, n, rd.exhausted)
	}
	if r.Outcome == VoteEscalate {
		r.Ask = max(r.Ask, keep-len(rd.named))
	}
	rd.draw(r, order, unable, keep, e.MaxReruns)
}

// asked are the re-runners rd named or dropped, once each.
func (rd *round) asked() []string {
	var out []string
	for _, p := range append(slices.Clone(rd.named), rd.dropped...) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// silence drops the named re-runners in silent, keeping at least keep
// named (silent ones then stay named, and dropped: they do not vote).
func (rd *round) silence(silent []string, keep int) {
	rd.dropped = slices.Clone(rd.dropped)
	var named []string
	for _, p := range rd.named {
		if slices.Contains(silent, p) && !slices.Contains(rd.dropped, p) {
			rd.dropped = append(rd.dropped, p)
			rd.dropping, rd.changed = true, true
		}
		if !slices.Contains(rd.dropped, p) {
			named = append(named, p)
		}
	}
	for _, p := range rd.named {
		if len(named) >= keep {
			break
		}
		if !slices.Contains(named, p) {
			named = append(named, p)
		}
	}
	rd.named = named
}

// draw asks the round ruling r asks for: the next places of order, at
// most most asked in all, one peer of each (the first unable does not
// rule out, else the first). A place whose every peer unable says cannot
// work now is asked dropped at once (an answer still counts if it comes)
// and does not count toward the round, unless keep needs it named. An
// order that runs dry exhausts the round.
func (rd *round) draw(r Ruling, order []Slot, unable func(string) bool, keep, most int) {
	if r.Outcome != VoteEscalate {
		return
	}
	asked := rd.asked()
	for n := 0; n < r.Ask && len(asked) < most; {
		i := slices.IndexFunc(order, func(s Slot) bool {
			return !slices.ContainsFunc(s.Peers, func(p string) bool { return slices.Contains(asked, p) })
		})
		if i < 0 {
			rd.exhausted, rd.changed = true, true
			return
		}
		peers := order[i].Peers
		p := peers[0]
		if j := slices.IndexFunc(peers, func(q string) bool { return unable == nil || !unable(q) }); j >= 0 {
			p = peers[j]
		}
		asked, rd.changed = append(asked, p), true
		if unable != nil && unable(p) && len(rd.named) >= keep {
			rd.dropped = append(rd.dropped, p)
			continue
		}
		rd.named = append(rd.named, p)
		n++
	}
}
