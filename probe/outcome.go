package probe

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
)

// ErrNotDue is returned by Outcome for a probe whose deadline has not
// passed on the reader's clock: its outcome may still change.
var ErrNotDue = errors.New("probe: deadline not passed")

// Task is a finished probe as the QoS ledger replays it.
type Task struct {
	// Outcome is the probe as a task: Assigned are the members that
	// committed and disclosed a correct answer in time, so it never
	// counts a timeout.
	Outcome dispatch.TaskOutcome
	// End is the challenge's seq plus the Deadline: where the probe sits
	// in the replay's time order.
	End time.Time
}

// TaskID names challenger p's probe of window w.
func TaskID(w uint64, p string) string { return fmt.Sprintf("probe/%d/%s", w, p) }

// Outcome reads one probe from its challenge record and the records under
// its key (commitments and results, in any order; others are ignored).
// advertised says whether a peer has an advertisement record; exp caches
// the expected answers (nil: computed each time). The
// challenge must be P's own, of the window its seq falls in, naming 1 to
// MaxGroup distinct advertised members, P first. A member's record counts
// when it is its own, its seq is within [challenge seq, challenge seq +
// Deadline] and it is correct for the expected output, which Outcome
// computes itself. A member counts when both its commitment and its
// result (not before the commitment) count; Assigned are those members,
// so a probe never yields a timeout. Rounds are ordered by (seq, peer
// ID). A probe nobody answered has no Assigned; the replay skips it.
func (c Config) Outcome(challenge crdt.Record, answers []crdt.Record, advertised func(string) bool, exp *Expectations, now time.Time) (Task, error) {
	k, ch, err := c.readChallenge(challenge, advertised)
	if err != nil {
		return Task{}, err
	}
	start := challenge.Seq
	end := start + uint64(c.Deadline)
	if now.Before(time.Unix(0, int64(end))) {
		return Task{}, ErrNotDue
	}
	want := exp.Get(k.Window, k.Challenger)
	commits := map[string]uint64{}
	results := map[string]uint64{}
	for _, r := range answers {
		a, err := ParseKey(r.Key)
		if err != nil || r.Tombstone || a.Kind == KindChallenge || a.Window != k.Window || a.Challenger != k.Challenger ||
			a.Member != r.AuthorText() || !slices.Contains(ch.Members, a.Member) || r.Seq < start || r.Seq > end {
			continue
		}
		h, err := DecodeAnswer(r.Payload)
		if err != nil {
			continue
		}
		switch {
		case a.Kind == KindCommit && r.Type == CommitType && h == CommitHash(want, a.Member):
			commits[a.Member] = r.Seq
		case a.Kind == KindResult && r.Type == ResultType && h == want:
			results[a.Member] = r.Seq
		}
	}
	// A member counts with both records or not at all: a commitment
	// whose result came late is left out, not counted as a timeout, since
	// a challenger that backdated its challenge may have caused it.
	for m, cs := range commits {
		if rs, ok := results[m]; !ok || rs < cs {
			delete(commits, m)
			delete(results, m)
		}
	}
	for m := range results {
		if _, ok := commits[m]; !ok {
			delete(results, m)
		}
	}
	o := dispatch.TaskOutcome{TaskID: TaskID(k.Window, k.Challenger), Commits: order(commits), Disclosures: order(results)}
	o.Assigned = slices.Clone(o.Commits)
	return Task{Outcome: o, End: time.Unix(0, int64(end))}, nil
}

// readChallenge checks a challenge record on its own.
func (c Config) readChallenge(r crdt.Record, advertised func(string) bool) (Key, Challenge, error) {
	k, err := ParseKey(r.Key)
	if err != nil {
		return Key{}, Challenge{}, err
	}
	if k.Kind != KindChallenge || r.Type != ChallengeType || r.Tombstone {
		return Key{}, Challenge{}, fmt.Errorf("%w: %s is no challenge", ErrBadRecord, r.Key)
	}
	if r.AuthorText() != k.Challenger {
		return Key{}, Challenge{}, fmt.Errorf("%w: challenge %s written by %s", ErrBadRecord, r.Key, r.Author)
	}
	ch, err := DecodeChallenge(r.Payload)
	if err != nil {
		return Key{}, Challenge{}, err
	}
	if err := ch.Validate(k.Challenger); err != nil {
		return Key{}, Challenge{}, err
	}
	if ch.Window != k.Window || c.WindowOf(r.Time()) != k.Window {
		return Key{}, Challenge{}, fmt.Errorf("%w: challenge %s of window %d written at %v", ErrBadRecord, r.Key, ch.Window, r.Time())
	}
	for _, m := range ch.Members {
		if advertised != nil && !advertised(m) {
			return Key{}, Challenge{}, fmt.Errorf("%w: challenge %s names %s, which never advertised", ErrBadRecord, r.Key, m)
		}
	}
	return k, ch, nil
}

// order lists the members by (seq, peer ID).
func order(seqs map[string]uint64) []string {
	ids := make([]string, 0, len(seqs))
	for id := range seqs {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		if c := cmp.Compare(seqs[a], seqs[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return ids
}
