// Package probe holds the mesh's probe tasks: small system tasks that keep
// every live processor's submission-speed score current when no DApp job
// gives it work (seed 003: "to ensure that every node gets at least 1 task
// at each time window").
//
// The mesh has no central sender, so the schedule is derived from public
// state. Time is cut into windows of Config.Window; in window w, each
// advertised processor P challenges once, at Offset(w, P). Its challenge
// record (ChallengeKey) names a group: P first, then up to Group−1 live
// processors it is connected to, the first by Rank(w, P, Q). Each member
// runs Module on Input(w, P) within Config.Deadline of the challenge,
// writes a commitment (CommitKey: CommitHash of its output digest and its
// own ID) and, once it sees the commitment stored, its result (ResultKey:
// the output digest). Every reader computes the expected digest itself
// (Expected) and counts only correct answers.
//
// A finished probe becomes a dispatch.TaskOutcome (Outcome) whose Assigned
// are the members that committed and disclosed in time: a probe never
// counts a timeout, since a
// challenger could backdate its challenge or name a processor that never
// sees it. Timeouts count only on DApp jobs.
//
// Probes pay nothing. Paying would let a processor earn by probing itself
// and its friends, and a probe costs less than a millisecond of CPU and
// three small records per member.
package probe
