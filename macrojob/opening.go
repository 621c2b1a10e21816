package macrojob

import (
	"time"

	"github.com/jobmesh/jobmesh/records"
)

// Opening a MacroJob's room. When a job appears, every processor looks at
// its open MacroJobs at once. If each opened the rooms it found open, the
// same MicroJobs would run in several rooms. So every processor ranks
// itself for each MacroJob (the first owner, named by rendezvous hashing,
// comes first), and the rank decides who opens the room and who waits:
//
//   - a room whose lock holds, or that was announced on the Job channel, is
//     joined, but only by the processors whose rank comes before the
//     number of its MicroJobs left without a commitment: no more can work
//     in it at once, and every member takes in every message of the room,
//     so a room that any number of processors joined would cost each of
//     them in proportion to the job's processors (the first owner ranks
//     0; a processor skips a room that is full by this rule and looks at
//     the next). Each processing timeout in which the number left has not
//     fallen lets one more rank in: a room whose members hold its
//     MicroJobs and never commit them (stuck, or stalling on purpose)
//     would otherwise keep out everyone who could run them;
//   - nobody opens a room while the job's ranks are not in use yet;
//   - the first owner opens it at once, unless others claimed it within the
//     last head start (it came late): then it joins the first of them in
//     rank;
//   - anyone else waits the head start after the ranks are first used (two
//     head starts when its rank is too far to join the room by the rule
//     above: those within it claim first, and a first owner's lock that is
//     only slow arrives meanwhile, so that one claim, not one from every
//     processor still free, answers a slow lock), then
//     claims the room on the Job channel and pauses: an eighth of the head
//     start for each place in rank, at most a whole head start. Then it
//     joins the room if one was locked or announced meanwhile, or the first
//     in rank of those that claimed it since its own claim less its pause
//     when that one comes before it; otherwise it opens the room. One that
//     has heard such a claim already when it would claim joins that
//     claimant at once, without a claim of its own: its claim would defer
//     to it, and every claim reaches every processor of the job.
//
// DecideOpen is that decision as a pure function of what the processor
// knows and the time; the processor carries out the action.

// OpenAction is what a processor does about an open MacroJob's room.
type OpenAction int

const (
	// OpenWait leaves the room for now: the processor looks again at
	// OpenDecision.Until, or, when Until is zero, once the job's ranks
	// are in use.
	OpenWait OpenAction = iota
	// OpenJoin joins the room of OpenDecision.Owner.
	OpenJoin
	// OpenClaim claims the room on the Job channel now and decides again
	// at OpenDecision.Until, with OpenInput.ClaimedAt set to the claim's
	// moment.
	OpenClaim
	// OpenNow opens the room: the processor creates its queue as owner.
	OpenNow
	// OpenSkip leaves the room to the processors before this one in rank:
	// it has fewer MicroJobs left than this processor's rank.
	OpenSkip
)

func (a OpenAction) String() string {
	switch a {
	case OpenWait:
		return "wait"
	case OpenJoin:
		return "join"
	case OpenClaim:
		return "claim"
	case OpenNow:
		return "open"
	case OpenSkip:
		return "skip"
	}
	return "unknown"
}

// RoomClaim is a claim on a room heard from another processor on the Job
// channel.
type RoomClaim struct {
	// Peer is the claimant.
	Peer string
	// At is when the claim was heard.
	At time.Time
	// Ahead reports whether the claimant comes before this processor in
	// the order that names first owners.
	Ahead bool
}

// OpenInput is what a processor knows of one MacroJob's room when it
// decides whether to open it.
type OpenInput struct {
	// Now is the moment of the decision.
	Now time.Time
	// HeadStart is how long, after the job's ranks are first used, the
	// room is left to its first owner; it also scales the pauses.
	HeadStart time.Duration
	// Lock is the room's lock record in the store; nil when the room was
	// never locked (or its record does not count).
	Lock *records.RoomLock
	// Announced is the owner a recent room announcement on the Job
	// channel named; empty when none. The store may lag the channel.
	Announced string
	// Ranked reports whether the job's ranks are in use; RankedAt is when
	// they were first used.
	Ranked   bool
	RankedAt time.Time
	// FirstOwner reports whether this processor is named to open the
	// room. Rank is otherwise its place after the first owner (k ≥ 1),
	// which sets its pause.
	FirstOwner bool
	Rank       int
	// Claims are the other processors' claims on the room, in the order
	// that names first owners, first first.
	Claims []RoomClaim
	// ClaimedAt is when this processor claimed the room; zero before it
	// has.
	ClaimedAt time.Time
	// Self is this processor; a room it owns is joined whatever its rank.
	Self string
	// Left is how many of the room's MicroJobs have no commitment yet; 0
	// means that no rank is too far to join (a job whose MicroJobs run in
	// several replicas).
	Left int
	// LeftSince is when this processor first saw Left MicroJobs left, and
	// Patience the processing timeout: each whole Patience since then
	// lets one more rank join. Zero Patience lets none.
	LeftSince time.Time
	Patience  time.Duration
}

// joinLimit is how many ranks (the first owner's 0 included) may join the
// room: Left, and one more for each whole Patience since LeftSince; 0
// when any may.
func (in OpenInput) joinLimit() int {
	if in.Left <= 0 || in.Patience <= 0 || in.LeftSince.IsZero() || in.Now.Before(in.LeftSince) {
		return in.Left
	}
	return in.Left + int(in.Now.Sub(in.LeftSince)/in.Patience)
}

// OpenDecision is the outcome of DecideOpen.
type OpenDecision struct {
	Action OpenAction
	// Owner is the room's owner to join (OpenJoin).
	Owner string
	// Until is when to look again (OpenWait; zero: once the ranks are in
	// use) or to decide again after a claim (OpenClaim).
	Until time.Time
}

// OpenPause is how long a processor k-th in rank (k ≥ 1) pauses between
// claiming a room and opening it: an eighth of the head start for each
// place, up to a whole head start. Processors that come free together then
// hear the claims of those before them before they open.
func OpenPause(k int, headStart time.Duration) time.Duration {
	return time.Duration(min(k, 8)) * headStart / 8
}

// DecideOpen decides what a processor does about a MacroJob's room (see
// the rules above). It does no I/O and reads no clock.
func DecideOpen(in OpenInput) OpenDecision {
	d := decideOpen(in)
	rank := in.Rank
	if in.FirstOwner {
		rank = 0
	}
	if limit := in.joinLimit(); d.Action == OpenJoin && d.Owner != in.Self && limit > 0 && rank >= limit {
		return OpenDecision{Action: OpenSkip}
	}
	return d
}

func decideOpen(in OpenInput) OpenDecision {
	if in.Lock != nil && !in.Lock.Open(in.Now) {
		return OpenDecision{Action: OpenJoin, Owner: in.Lock.Owner}
	}
	if in.Announced != "" {
		return OpenDecision{Action: OpenJoin, Owner: in.Announced}
	}
	if !in.ClaimedAt.IsZero() {
		return afterClaim(in)
	}
	if !in.Ranked {
		return OpenDecision{Action: OpenWait}
	}
	if in.FirstOwner {
		// It came late to a room others claimed within the longest
		// pause: the first of them in rank is opening it.
		if c, ok := firstClaim(in.Claims, in.Now.Add(-in.HeadStart)); ok {
			return OpenDecision{Action: OpenJoin, Owner: c.Peer}
		}
		return OpenDecision{Action: OpenNow}
	}
	var extra time.Duration
	if limit := in.joinLimit(); limit > 0 && in.Rank >= limit {
		// Too far in rank to join: it waits a second head start, in
		// which those within the limit claim the room or its lock
		// arrives, and claims only when neither came.
		extra = in.HeadStart
	}
	if wait := in.HeadStart + extra; in.Now.Sub(in.RankedAt) < wait {
		return OpenDecision{Action: OpenWait, Until: in.RankedAt.Add(wait)}
	}
	pause := OpenPause(in.Rank, in.HeadStart)
	// A claim heard within its pause, or within its second head start,
	// comes from one that is opening the room.
	if c, ok := firstClaim(in.Claims, in.Now.Add(-pause-extra)); ok && c.Ahead {
		return OpenDecision{Action: OpenJoin, Owner: c.Peer}
	}
	return OpenDecision{Action: OpenClaim, Until: in.Now.Add(pause)}
}

// afterClaim decides for a processor that claimed the room: once its pause
// is over, it defers to a claimant before it in rank, else opens.
func afterClaim(in OpenInput) OpenDecision {
	pause := OpenPause(in.Rank, in.HeadStart)
	if until := in.ClaimedAt.Add(pause); in.Now.Before(until) {
		return OpenDecision{Action: OpenWait, Until: until}
	}
	if c, ok := firstClaim(in.Claims, in.ClaimedAt.Add(-pause)); ok && c.Ahead {
		return OpenDecision{Action: OpenJoin, Owner: c.Peer}
	}
	return OpenDecision{Action: OpenNow}
}

// firstClaim returns the first claim in rank heard at or after since.
func firstClaim(claims []RoomClaim, since time.Time) (RoomClaim, bool) {
	for _, c := range claims {
		if !c.At.Before(since) {
			return c, true
		}
	}
	return RoomClaim{}, false
}
