// Package processor is the processor role of a jobmesh node: the loops
// that drive a job's work from discovery to settlement. The rules it
// follows live in pure packages; processor reads the store and the
// channels, asks those rules, and writes what they decide.
//
// A Worker runs four loops (New starts them, Close stops them):
//
//   - discovery (discovery.go): jobs heard on the Jobs channel or seen in
//     the replicated store are learned once; the record index (jobindex)
//     follows their records.
//   - work (work.go, rooms.go, groupwork.go, verifiers.go): each step
//     orders the followed jobs (meshview.OrderJobs), joins or opens a
//     MacroJob room (macrojob.DecideOpen), runs the MicroJobs its turn
//     hands it and commits them in one batch; group jobs ask groupjob.
//   - settle (settle.go, disclose.go, aggregate.go, finalizer.go,
//     requests.go, selfcheck.go, audit.go): pending disclosures go out when
//     due (disclosure.Pending); with room stores (Params.Rooms) the
//     MacroJobs' aggregates go to the job's store when due; every followed
//     job is judged and its finalizer
//     carries out finish.Decide: requests for re-runs, checks and redos,
//     the verdict, the standby and takeover; re-runs and redos asked of
//     this node run here too.
//   - view (view.go): the mesh's processors, weights and QoS
//     (meshview.Facts), refreshed on a timer and on every new advert.
//
// With a chain (Params.Chain) the worker joins funded jobs' escrows
// (membership.Joiner) and hands finished jobs to its settlement.Settler
// (escrow.go); a finished job's output is kept by custody.Keeper.
//
// One mutex (Worker.mu) guards the followed jobs' state (jobState); the
// parts the worker hands work to (the index, custody, groupjob,
// disclosure, settlement) keep their own locks. Every decision reads the
// clock through Params.Now, so tests can drive time.
package processor
