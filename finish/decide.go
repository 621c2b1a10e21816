package finish

import (
	"slices"
	"time"

	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// Timing holds the durations the finishing rules wait for; the
// processor's Config gives them.
type Timing struct {
	// DuplicateGrace is how long a complete job waits for the disclosures
	// of commitments not disclosed yet.
	DuplicateGrace time.Duration
	// RerunTimeout is how long a complete job waits for the disclosures
	// its checks name.
	RerunTimeout time.Duration
	// Takeover is how long a finalizer's "finalizing" message keeps those
	// ranked below it standing by, and the turn of each rank.
	Takeover time.Duration
	// Limit is how long after a job is complete heard "finalizing"
	// messages keep a processor standing by.
	Limit time.Duration
}

// Input is what a processor knows of a job when it decides how to finish
// it. The driver keeps Complete and Finalizing between decisions.
type Input struct {
	// Judgement is the judgement of Records (Judge).
	Judgement Judgement
	// Records are the job's records as read.
	Records *Records
	// Agree says whether a verdict record that follows from the records
	// counts (WeighVerdicts' agree, not empty).
	Agree bool
	// Self is this processor's peer ID.
	Self string
	// Complete is when this processor first found the job complete, zero
	// before.
	Complete time.Time
	// Finalizing is, per processor, when it was last heard finishing the
	// job on the Job channel.
	Finalizing map[string]time.Time
	// Now is the time of the decision.
	Now time.Time
	// Timing are the durations to wait for.
	Timing Timing
}

// Step is what a decision leaves the processor to do with the job.
type Step int

const (
	// Finished: a verdict that follows from the records counts.
	Finished Step = iota
	// Idle: the job is not complete, or this processor may not finish it.
	Idle
	// WaitDisclosures: commitments are not disclosed yet; wait until Until.
	WaitDisclosures
	// WaitChecked: checks name processors whose disclosures this store
	// lacks yet; wait until Until.
	WaitChecked
	// StandBy: another finalizer is finishing the job; judge again at
	// Until.
	StandBy
	// Rerun: request re-runs for the verdict's disputes (take over).
	Rerun
	// Unverified: the job is complete but not verified; wait.
	Unverified
	// Check: request the checks of self-checked blocks, then write the
	// verdict once they are settled.
	Check
)

var stepNames = [...]string{"finished", "idle", "wait-disclosures", "wait-checked", "standby", "rerun", "unverified", "check"}

func (s Step) String() string { return stepNames[s] }

// Decision is what Decide finds: the records to write and the step.
type Decision struct {
	Step Step
	// Until is when a waiting or standing-by processor judges again.
	Until time.Time
	// Redos are the redo records to write: a culprit's MicroJobs without
	// an accepted redo.
	Redos []records.Redo
	// Silent says whether the processor, a finalizer, looks for silent
	// committers to redo (SilentCommitters, weighed with what it hears).
	Silent bool
	// Complete is when the job was first found complete (the Input's, or
	// Now); zero while it is not, or this processor may not finish it.
	Complete time.Time
	// Disputes are the disputes to request re-runs for (Step Rerun).
	Disputes []microjob.Dispute
}

// Decide is the finishing rule: from a judged job and what this
// processor heard, what it writes and what it does next. Only the job's
// finalizers write its requests and its verdict (authors.go); one of them
// finishes it and the others stand by (Standby).
func Decide(in Input) Decision {
	j := in.Judgement
	if in.Agree && (len(j.Order) == 0 || j.Order[0] != in.Self) {
		// The designated finalizer checks its output before it lets
		// another's verdict stand.
		return Decision{Step: Finished}
	}
	d := Decision{Step: Idle}
	v, acc := j.V, j.Recs
	finalizer := slices.Contains(j.Order, in.Self)
	if !finalizer {
		return d
	}
	for _, m := range append(slices.Clone(j.Redo), v.Missing...) {
		if len(j.Culprits) == 0 {
			break
		}
		// A redo that does not exclude a culprit named since would let
		// that culprit's run stand for the redo: it is asked again.
		if rd, ok := acc.Redo[m]; !ok || !excludesAll(rd, j.Culprits) {
			d.Redos = append(d.Redos, records.Redo{Micro: m, Exclude: union(rd.Exclude, j.Culprits)})
		}
	}
	d.Silent = true
	if !v.Complete {
		return d
	}
	d.Complete = in.Complete
	if d.Complete.IsZero() {
		d.Complete = in.Now
	}
	waited := in.Now.Sub(d.Complete)
	switch {
	case Undisclosed(in.Records) > 0 && waited < in.Timing.DuplicateGrace:
		d.Step, d.Until = WaitDisclosures, d.Complete.Add(in.Timing.DuplicateGrace)
	case ChecksAhead(acc) > 0 && waited < in.Timing.RerunTimeout:
		// A check is written only after its processor disclosed: this
		// store is still catching up, and judging now could miss a liar.
		d.Step, d.Until = WaitChecked, d.Complete.Add(in.Timing.RerunTimeout)
	default:
		if until, ok := Standby(j.Order, in.Self, waited, in.Now, in.Finalizing, in.Timing); ok {
			d.Step, d.Until = StandBy, until
		} else {
			d.Step, d.Disputes = finishing(v), v.Disputes
		}
	}
	return d
}

// finishing is the step of the finalizer that finishes a complete job
// with verdict v.
func finishing(v microjob.Verdict) Step {
	switch {
	case len(v.Disputes) > 0:
		return Rerun
	case !v.Verified:
		return Unverified
	}
	return Check
}

// Standby reports whether self stands by for another processor to finish
// a job with finalizer order order, complete for waited at now, having
// heard the others "finalizing" at the times in heard; and until when it
// does so before it judges the job again. A processor of rank k stands
// by while the job has been complete for less than k × Takeover, and
// while one ranked above it was heard finishing the job within Takeover,
// but no longer than Limit after the job is complete.
func Standby(order []string, self string, waited time.Duration, now time.Time, heard map[string]time.Time, t Timing) (time.Time, bool) {
	rank := slices.Index(order, self)
	if rank < 0 {
		// Not a finalizer of the job: its verdict would not count.
		return now.Add(t.Takeover), true
	}
	if rank == 0 {
		return time.Time{}, false
	}
	if turn := time.Duration(rank) * t.Takeover; waited < turn {
		return now.Add(turn - waited), true
	}
	if waited >= t.Limit {
		return time.Time{}, false
	}
	var last time.Time
	for _, p := range order[:rank] {
		if at := heard[p]; at.After(last) {
			last = at
		}
	}
	if now.Sub(last) < t.Takeover {
		return last.Add(t.Takeover), true
	}
	return time.Time{}, false
}

// excludesAll reports whether rd excludes every processor in ps.
func excludesAll(rd records.Redo, ps []string) bool {
	for _, p := range ps {
		if !slices.Contains(rd.Exclude, p) {
			return false
		}
	}
	return true
}

// union is the sorted set of the processors in a and b.
func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}
