package finish

import (
	"bytes"
	"slices"
	"time"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// Silence is what a finalizer weighs before it has the MicroJobs of
// silent committers redone (RedoSilent).
type Silence struct {
	// Silent are, by MicroJob, its committers that never disclosed it
	// (SilentCommitters, kept to MacroJobs whose commitment round is over).
	Silent map[string][]string
	// Since is, by MicroJob, when this processor first found it silent:
	// the Since of the last RedoSilent.
	Since map[string]time.Time
	// Heard is, by committer, when this node last saw a new record of the
	// job from it.
	Heard map[string]time.Time
	// Connected are the committers connected to this node.
	Connected map[string]bool
	// Grace is how long a silent MicroJob waits before it is redone;
	// ConnectedGrace how long when one of its committers is connected.
	Grace, ConnectedGrace time.Duration
	// Redo are the MicroJobs with a redo record already (Records.Redo).
	Redo map[string]records.Redo
	// Now is the time of the weighing.
	Now time.Time
}

// Silenced is what RedoSilent finds.
type Silenced struct {
	// Redos are the redo records to write, by MicroJob in order.
	Redos []records.Redo
	// Since is the Silence's Since for the next weighing: only the
	// MicroJobs silent now.
	Since map[string]time.Time
	// Wait says some silent MicroJob is not due yet: weigh again when its
	// grace is over, even if the records do not change.
	Wait bool
}

// RedoSilent is the rule for committers that went silent: a MicroJob is
// redone once nothing new came from any of its committers in the job for
// Grace since it was first found silent (a processor that stopped between
// the two rounds), or for ConnectedGrace when a committer is still
// connected to this node. Each MicroJob's silence is timed on its own:
// one silent for long does not make another, silent only since its
// MacroJob's last commitment, due at once. A committer that keeps writing
// is alive and only behind: its view may lack its MacroJob's last
// commitments for long when the mesh is loaded, and redoing its
// MicroJobs then only adds load. Its writes put the redo off for at most
// ConnectedGrace after the MicroJob was first found silent: a committer
// that writes on and never discloses (one whose disclosures do not count,
// such as a processor that is not a member of the job's escrow) would
// otherwise hold the job for good. The MicroJobs are redone by others, as
// a culprit's are, so the job does not wait for a silent processor
// forever.
func RedoSilent(s Silence) Silenced {
	out := Silenced{Since: make(map[string]time.Time, len(s.Silent))}
	var due []string
	for m, ps := range s.Silent {
		at, ok := s.Since[m]
		if !ok {
			at = s.Now
		}
		out.Since[m] = at
		grace := s.Grace
		for _, p := range ps {
			if s.Heard[p].After(at) {
				at = s.Heard[p]
			}
			if s.Connected[p] {
				grace = s.ConnectedGrace
			}
		}
		if s.Now.Sub(at) >= grace || s.ConnectedGrace > 0 && s.Now.Sub(out.Since[m]) >= s.ConnectedGrace {
			due = append(due, m)
		} else {
			out.Wait = true
		}
	}
	slices.Sort(due)
	for _, m := range due {
		if _, ok := s.Redo[m]; !ok {
			out.Redos = append(out.Redos, records.Redo{Micro: m, Exclude: s.Silent[m]})
		}
	}
	return out
}

// RedoRank is self's place among the processors that may redo rd of job
// id: those in procs that meet req and are not excluded, ranked by a
// hash of their peer ID with the job and the MicroJob (rendezvous
// hashing: every node ranks them alike). The first redoes it at once,
// the k-th only after k MicroJob processing timeouts (those before it may
// have stopped). procs holds the live processors the mesh has not kicked
// out.
func RedoRank(self string, id jobs.ID, rd records.Redo, req jobs.Requirements, procs []dispatch.Node) int {
	mine := redoHash(self, id, rd)
	rank := 0
	for _, p := range procs {
		if p.ID == self || slices.Contains(rd.Exclude, p.ID) ||
			req.GPUModel != "" && req.GPUModel != p.CardModel || p.VRAM < req.MinVRAMMiB {
			continue
		}
		if h := redoHash(p.ID, id, rd); bytes.Compare(h[:], mine[:]) > 0 {
			rank++
		}
	}
	return rank
}

func redoHash(p string, id jobs.ID, rd records.Redo) [32]byte {
	return records.RankHash(p, id.String(), rd.Micro, "redo")
}

// PassDue reports whether a pass over a job's requests (disputes,
// self-checks, redos, re-runs) is due at now: the requests are at version
// ver, and the last pass saw version last at lastAt. It is due when they
// changed, when every has gone by since (a takeover may have come due, or
// a redo been done), and always while the version is unknown (0). A
// driver steps far more often than either, and a pass reads all the
// job's records.
func PassDue(ver, last uint64, lastAt, now time.Time, every time.Duration) bool {
	return ver == 0 || ver != last || now.Sub(lastAt) >= every
}
