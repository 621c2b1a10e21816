// Package groupjob is the group-job role of a processor: a job whose
// Requirements.Replicas R is above 1 is run by a group of R processors of
// one card model, each of which runs every MicroJob, so that the verdict
// can compare R results of each.
//
// The first processor that takes such a job chooses its group
// (meshview.ChooseGroup) and writes it; every node settles on the same
// winner among the records written (meshview.PickGroup). Only members open
// or join the job's rooms (Groups.MayWork). A member replaces members that
// commit nothing for Config.SilentAfter with a new round of the group
// (meshview.Replacement). Processors of the group's card model outside it
// take the job's redo requests once a MacroJob's commitment round is over
// (Groups.MayRedo).
//
// A MacroJob room of a replicated job queues R items per MicroJob,
// "<micro-id>#<r>" for r = 0..R-1, all the #0 items first (RoomItems). An
// item is a token for one run: the member the queue hands it runs that
// MicroJob if it has not run it yet and fewer than R processors have
// committed to it, and otherwise another MicroJob of the MacroJob that it
// has not run and that still lacks committers (Target); then it completes
// the item. A member with nothing left to run in a MacroJob does not ask
// its room for work, so it holds no token it cannot use; a token it holds
// anyway (a race with the store) is left to expire and is handed to
// another member. A room re-created after all members left completes, per
// MicroJob, as many tokens as the store shows committers
// (Groups.CompleteReplicas).
//
// The pure rules are meshview's and finish.Progress's; this package keeps
// the state one processor needs to apply them (the groups it knows, when
// it first saw each round) behind its own mutex, and reaches the store,
// the job's progress, the dispatch view and the time only through the
// small interfaces at the top of groups.go. The processor runs the
// MicroJobs; it asks this package whether and what to run.
package groupjob
