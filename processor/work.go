package processor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/disclosure"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/wasm"
)

// work is the processor's main loop: one MicroJob (or re-run) at a time.
func (w *Worker) work(ctx context.Context) {
	defer w.wg.Done()
	t := time.NewTicker(w.cfg.Poll)
	defer t.Stop()
	// The whole of /jobs is read at start and then now and then, for what
	// the Jobs channel and the store's watch both missed; the watch
	// (noticeRecord) keeps the worker current between.
	var synced, queried time.Time
	for {
		if w.now().Sub(synced) >= syncEvery*w.cfg.Poll {
			w.syncKnown(ctx)
			synced = w.now()
		}
		w.queryWhileCatchingUp(ctx, &queried)
		w.retireFinished()
		if w.step(ctx) {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.wake:
		}
	}
}

// syncEvery is how many Poll periods pass between full reads of /jobs.
const syncEvery = 10

// retireFinished leaves the channel and rooms of jobs that have a verdict.
func (w *Worker) retireFinished() {
	w.mu.Lock()
	var topics []*p2p.Topic[jobs.ChannelMsg]
	var rooms []*macrojob.Room
	for id, js := range w.known {
		if !js.finished && !failedLocked(js) {
			continue
		}
		if js.chainDone || w.p.Chain == nil && failedLocked(js) ||
			w.p.Chain == nil && w.now().Sub(js.verdicts.finishedAt) >= w.cfg.finalizeLimit() {
			// Until then a record that comes late and changes the
			// judgement reopens the job (recheckFinished).
			w.index.Forget(id)
		}
		if js.topic != nil {
			topics = append(topics, js.topic)
			js.topic = nil
		}
		prefix := id.String() + "/"
		for name, r := range w.rooms {
			if strings.HasPrefix(string(name), prefix) {
				rooms = append(rooms, r)
				delete(w.rooms, name)
			}
		}
	}
	// A room whose queue is done is left as soon as nothing of this node
	// waits there for an acknowledgement: staying would only take in the
	// messages of its members' tail.
	var finished []*macrojob.Room
	for _, r := range w.rooms {
		if r.Finished() {
			finished = append(finished, r)
		}
	}
	w.mu.Unlock()
	for _, t := range topics {
		t.Close()
	}
	for _, r := range rooms {
		r.Close()
	}
	for _, r := range finished {
		w.leave(r, true)
	}
}

// step does one unit of work and reports whether it did any.
func (w *Worker) step(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	if w.doReruns(ctx) || w.doRedos(ctx) {
		return true
	}
	mark := w.waitMark()
	now := w.now()
	var workable []*jobState
	for _, js := range w.candidates(now) {
		// A replicated job: members of its group only (groupjob). A
		// processor joins the escrow only of a job it works on (funded).
		if w.cancelled(ctx, js) || !w.groups.MayWork(ctx, js.info, js.plan()) || !w.funded(ctx, js, now) {
			continue
		}
		if err := w.ensureInputs(ctx, js); err != nil {
			w.fail(js, "fetching job inputs", err)
			continue
		}
		workable = append(workable, js)
	}
	// MicroJobs that others reported failed are run here before any
	// other work: the job may be failed.
	for _, js := range workable {
		if w.checkFailure(ctx, js) {
			return true
		}
	}
	// A job whose code failed here gets no more work from this node
	// than the failure checks: its other MicroJobs would most likely fail
	// alike.
	workable = slices.DeleteFunc(workable, func(js *jobState) bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return failedLocked(js) || len(js.fail.own) > 0
	})
	// Verifier MicroJobs due here come before room work of any job:
	// others wait for them, or take them over after a ProcessingTimeout.
	for _, js := range workable {
		w.drawChecks(ctx, js)
		if w.runVerifiers(ctx, js) {
			return true
		}
	}
	for _, js := range workable {
		room, err := w.room(ctx, js)
		if err != nil {
			if ctx.Err() == nil {
				w.log.Warn("joining a room", "job", js.plan().JobID, "err", err)
			}
			continue
		}
		if room == nil {
			continue
		}
		// Waiting for the queue is bounded so that a stalled room does not
		// hold the worker: its owner's successors take over meanwhile.
		nctx, cancel := context.WithTimeout(ctx, w.waitForQueue())
		w.beginWait(js, mark, cancel) // a verdict ends the wait (noticeRecord)
		ids, err := room.NextBatch(nctx, w.turnSize(js))
		cancel()
		switch {
		case errors.Is(err, macrojob.ErrRoomDone):
			w.leave(room, true)
			return true
		case err != nil:
			continue
		}
		w.process(ctx, js, room, ids)
		return true
	}
	return false
}

func (w *Worker) fail(js *jobState, what string, err error) {
	w.mu.Lock()
	js.failed = w.now()
	w.mu.Unlock()
	w.log.Warn(what, "job", js.plan().JobID, "err", err)
}

// ensureInputs fetches and checks a job's code and data once.
func (w *Worker) ensureInputs(ctx context.Context, js *jobState) error {
	w.mu.Lock()
	have := js.code != nil && js.data != nil
	w.mu.Unlock()
	if have {
		return nil
	}
	fctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	code, err := w.fetch.FetchVerified(fctx, js.info.Code.URI, js.info.Code.SHA256, w.cfg.MaxCodeSize)
	if err != nil {
		return fmt.Errorf("code %s: %w", js.info.Code.URI, err)
	}
	if int64(js.info.Data.Size) > w.cfg.MaxDataSize {
		return fmt.Errorf("data is %d bytes, this node takes at most %d", js.info.Data.Size, w.cfg.MaxDataSize)
	}
	data, err := w.fetch.FetchVerified(fctx, js.info.Data.URI, js.info.Data.SHA256, int64(js.info.Data.Size))
	if err != nil {
		return fmt.Errorf("data %s: %w", js.info.Data.URI, err)
	}
	if uint64(len(data)) != js.info.Data.Size {
		return fmt.Errorf("data is %d bytes, the job says %d", len(data), js.info.Data.Size)
	}
	w.mu.Lock()
	js.code, js.data = code, data
	w.mu.Unlock()
	// Compile the code now, while the job's ranks may still be young
	// (rankedAt), rather than in its first MicroJob.
	if p, ok := w.exec.(wasm.Preparer); ok {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			if err := p.Prepare(w.runCtx, code); err != nil && w.runCtx.Err() == nil {
				w.log.Warn("compiling the job's code", "job", js.plan().JobID, "err", err)
			}
		}()
	}
	return nil
}

func (w *Worker) join(ctx context.Context, js *jobState, m *jobs.MacroJob, creator macrojob.PeerID, committed map[jobs.ID]bool) (*macrojob.Room, error) {
	items := roomItems(js, m)
	if w.p.Rooms != nil {
		// The other members' records of the MacroJob are in its room
		// store.
		if _, err := w.p.Rooms.OpenRoom(ctx, js.plan().JobID, m.Index); err != nil {
			return nil, err
		}
	}
	r, err := macrojob.JoinRoom(ctx, macrojob.RoomParams{
		Host: w.p.Host, Store: w.p.Store, JobID: js.plan().JobID.String(), Macro: m.Index,
		Items: items, Creator: creator, Logger: w.log, Metrics: w.m.rooms,
		Settled: func() { w.roomSettled(js, m) },
	}, w.roomConfig(js))
	if err != nil {
		return nil, err
	}
	// MicroJobs already committed in the store are done, whatever the
	// queue's members remember (a room re-created after all left).
	var known []macrojob.ID
	for _, mu := range m.Micros {
		if committed[mu.ID] && !replicated(js) && !outOfRoom(js, &mu) {
			known = append(known, macrojob.ID(mu.ID.String()))
		}
	}
	if len(known) > 0 {
		_ = r.Learn(ctx, known)
	}
	w.groups.CompleteReplicas(ctx, js.info, js.plan(), m, r, creator)
	w.mu.Lock()
	w.rooms[r.Name] = r
	w.mu.Unlock()
	if creator == macrojob.PeerID(w.self) {
		if t := w.jobChannel(ctx, js); t != nil {
			_ = t.Publish(ctx, jobs.ChannelMsg{Kind: jobs.KindRoom, JobID: js.plan().JobID.String(), Macro: m.Index, Processor: w.self, Open: len(items)})
		}
		w.log.Info("took MacroJob room", "room", r.Name)
	} else {
		w.log.Info("joined MacroJob room", "room", r.Name, "owner", creator)
	}
	return r, nil
}

// leave closes a room. A room left because its queue is done is not
// joined or taken again for a lock TTL: the store may not show every
// commitment yet, and if one is still missing after that (its committer
// died before it replicated), the MacroJob is taken again and the gap
// redone.
func (w *Worker) leave(r *macrojob.Room, done bool) {
	w.mu.Lock()
	delete(w.rooms, r.Name)
	if done {
		w.doneRooms[r.Name] = w.now()
	}
	w.mu.Unlock()
	r.Close()
}

// waitForQueue bounds one wait for work from a room: long enough for the
// lock holders to finish and for an owner's successor to take over.
func (w *Worker) waitForQueue() time.Duration {
	p, o := w.processingTimeout(), w.cfg.Room.Queue.OwnerTimeout
	if o == 0 {
		o = macrojob.DefaultConfig().OwnerTimeout
	}
	return p + 4*o
}

func (w *Worker) lockTTL() time.Duration {
	if w.cfg.Room.LockTTL > 0 {
		return w.cfg.Room.LockTTL
	}
	return time.Minute
}

// roomDone reports whether every MicroJob of m's room is in done (a
// verifier run outside the room does not count; see verifiers.go).
func roomDone(js *jobState, m *jobs.MacroJob, done map[jobs.ID]bool) bool {
	for _, mu := range m.Micros {
		if !done[mu.ID] && !outOfRoom(js, &mu) {
			return false
		}
	}
	return true
}

// firstTurn is the turn size for a job whose MicroJobs this worker has
// not run yet.
const firstTurn = 3

// turnSize is how many MicroJobs the worker takes from a room at once
// (what the queue locks for it per turn), and the most verifier MicroJobs
// it runs in one step. Turns end with one store batch and one progress
// message, so fewer, larger turns cost the mesh less; but a turn holds
// its MicroJobs from the job's other processors. So a turn is at most:
//   - MaxLocksPerTurn;
//   - this processor's share of the work left, ⌈left ÷ P⌉ for P
//     eligible processors (guided self-scheduling: turns shrink as the
//     job nears its end, so that no processor is left running a long
//     turn while the others are idle);
//   - what it can run, at the pace of its recent MicroJobs of the job, in
//     half the time a lock lasts (ProcessingTimeout): a turn longer than
//     its locks would have its last MicroJobs run twice. A job not run
//     yet starts at firstTurn.
func (w *Worker) turnSize(js *jobState) int {
	n := w.cfg.Room.Queue.MaxLocksPerTurn
	if n <= 0 {
		n = macrojob.DefaultConfig().MaxLocksPerTurn
	}
	w.mu.Lock()
	per, procs, done := js.runTime, js.eligible, len(js.doneMap)
	w.mu.Unlock()
	if plan := js.plan(); procs > 0 && plan != nil {
		left := max(plan.NumMicroJobs()-done, 1)
		n = min(n, (left+procs-1)/procs)
	}
	if per <= 0 {
		return min(n, firstTurn)
	}
	return max(1, min(n, int(w.processingTimeout()/2/per)))
}

// ranFor folds one MicroJob's run time into the job's pace (a moving
// average weighing the latest run 3/10).
func (w *Worker) ranFor(js *jobState, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if js.runTime <= 0 {
		js.runTime = d
		return
	}
	js.runTime = (7*js.runTime + 3*d) / 10
}

// process runs the MicroJobs of one ownership turn, writes their
// commitments as one store batch and completes them in the room. The
// disclosures wait in pending until their MacroJob's every MicroJob has a
// commitment. A MicroJob that fails to run is left locked: its lock
// expires and the queue offers it again. room is nil for verifier
// MicroJobs run outside any room (verifiers.go): a failed one is due again
// at a later step.
func (w *Worker) process(ctx context.Context, js *jobState, room *macrojob.Room, ids []macrojob.ID) {
	w.mu.Lock()
	per := js.runTime
	w.mu.Unlock()
	w.discl.StartTurn(w.now(), len(ids), per)
	defer w.endTurn()
	took := w.tookTurn(ctx, js)
	defer took.end()
	if replicated(js) {
		w.processReplicas(ctx, js, room, ids, took)
		return
	}
	var done []macrojob.ID
	var ran []microjob.Disclosure
	var commits []crdt.Entry
	for _, id := range ids {
		mid, err := jobs.ParseHash(string(id))
		if err != nil {
			continue
		}
		micro, err := js.plan().MicroJob(mid)
		if err != nil {
			continue
		}
		w.mu.Lock()
		mine := js.mine[mid]
		w.mu.Unlock()
		p, err := w.progressOf(ctx, js)
		elsewhere := err == nil && p.CommittedByOther(mid, w.self)
		if mine || elsewhere || w.heardDone(js)[mid] {
			// Already committed here (the queue re-offered it, e.g. after
			// a takeover), or by another processor (its lock expired, or
			// two rooms ran for one MacroJob), or heard complete from an
			// active processor whose commitment the store may not show
			// yet: completing it costs nothing, running it again would,
			// and a commitment that is never disclosed is redone anyway
			// (redoSilent), one that never arrives retaken (heardDone).
			done = append(done, id)
			continue
		}
		took.add(micro.Macro)
		if w.cfg.Hold != nil {
			w.cfg.Hold(ctx, js.plan().JobID, mid)
			if ctx.Err() != nil {
				return
			}
		}
		start := w.now()
		d, c, err := w.run(ctx, js, micro)
		w.ranFor(js, w.now().Sub(start))
		if _, det := records.FailureOf(err); det {
			continue // reported (noteRun), no backoff: the failure checks come next
		}
		if err != nil {
			w.fail(js, "running MicroJob", err)
			continue
		}
		ran = append(ran, d)
		commits = append(commits, crdt.Entry{Key: records.CommitmentKey(c), Type: records.CommitType, Payload: c.Encode()})
		done = append(done, id)
	}
	w.finishTurn(ctx, js, room, turnResult{ran: ran, commits: commits, done: done, took: took})
}

// turnResult is what one ownership turn ran: the disclosures to publish
// later, the commitments to write now, the items to complete in the room
// and the took records it owes.
type turnResult struct {
	ran     []microjob.Disclosure
	commits []crdt.Entry
	done    []macrojob.ID
	took    *turnTook
}

// finishTurn writes a turn's commitments as one store batch (commitTurn),
// completes its items in the room (when there is one), keeps the
// disclosures that are not due yet for their round and announces the
// progress. Nothing is completed when the commitments could not be
// written: their locks expire and the queue offers them again.
func (w *Worker) finishTurn(ctx context.Context, js *jobState, room *macrojob.Room, t turnResult) {
	ran, commits, done := t.ran, t.commits, t.done
	w.mu.Lock()
	over := js.finished
	w.mu.Unlock()
	if over {
		// A verdict came while the turn ran: its MicroJobs have results,
		// and late commitments would only reopen the judgement.
		w.log.Info("dropping a turn's results: the job has a verdict", "job", js.plan().JobID, "microjobs", len(ran))
		return
	}
	later := ran
	if len(commits) > 0 {
		var ok bool
		if later, ok = w.commitTurn(ctx, js, commits, ran, t.took); !ok {
			return
		}
	}
	if len(done) > 0 && room != nil {
		if err := room.CompleteAll(ctx, done); err != nil {
			w.log.Warn("completing MicroJobs in room", "room", room.Name, "err", err)
		}
	}
	w.discl.Add(later...)
	w.mu.Lock()
	if js.mine == nil {
		js.mine = map[jobs.ID]bool{}
	}
	for _, d := range ran {
		js.mine[d.MicroID] = true
	}
	w.mu.Unlock()
	var micros []string
	for _, d := range ran {
		w.log.Info("MicroJob committed", "job", js.plan().JobID, "macro", d.MacroIndex, "micro", d.MicroID)
		micros = append(micros, d.MicroID.String())
	}
	if room == nil {
		// A verifier has no room whose owner would say it complete
		// (roomSettled): its runner does.
		w.sayProgress(ctx, js, micros)
	}
}

// endTurn ends a turn started in process. Disclosures held for the turn
// that it did not carry (it wrote no commitments) go out at once.
func (w *Worker) endTurn() {
	if w.discl.EndTurn() {
		w.index.Signal() // wakes the settle loop
	}
}

// commitTurn writes a turn's commitments, and with them, in the same
// store batch, the took records the turn still owes (turnTook) and the
// disclosures that are due once they are written (see disclose): pending
// ones, and those of the turn itself (ran) whose MacroJob these
// commitments complete. It reports whether the commitments
// were written, and the disclosures of ran that were not, which wait for
// their round; pending disclosures that were not written stay pending.
func (w *Worker) commitTurn(ctx context.Context, js *jobState, commits []crdt.Entry, ran []microjob.Disclosure, took *turnTook) (later []microjob.Disclosure, ok bool) {
	batch := make(map[jobs.ID]bool, len(ran))
	for _, d := range ran {
		batch[d.MicroID] = true
	}
	r := w.discl.Begin(ctx, followed{w}, batch)
	now, later := r.Split(ran)
	macros, entries := took.claim()
	entries = append(append(entries, commits...), disclosure.Entries(r.Due)...)
	err := w.writer.PutBatch(ctx, append(entries, disclosure.Entries(now)...))
	r.End(err == nil)
	if err != nil {
		w.log.Warn("writing commitments", "job", js.plan().JobID, "count", len(commits), "err", err)
		return nil, false
	}
	took.wrote(macros)
	w.m.microjobs.WithLabelValues("ok").Add(float64(len(commits)))
	return later, true
}

// run executes one MicroJob; it returns the disclosure to publish later
// and the commitment to write now.
func (w *Worker) run(ctx context.Context, js *jobState, micro *jobs.MicroJob) (microjob.Disclosure, microjob.Commitment, error) {
	w.mu.Lock()
	code, data := js.code, js.data
	w.mu.Unlock()
	start := time.Now()
	out, err := w.runner.Run(ctx, microjob.Input{Info: js.info, Plan: js.plan(), Micro: micro, Code: code, Data: data})
	w.noteRun(ctx, js, micro.ID, err)
	if err != nil {
		w.m.microjobs.WithLabelValues("failed").Inc()
		return microjob.Disclosure{}, microjob.Commitment{}, err
	}
	w.custody.Pin(ctx, js.plan().JobID, out.ResultCID)
	salt, err := microjob.NewSalt()
	if err != nil {
		return microjob.Disclosure{}, microjob.Commitment{}, err
	}
	wallet := w.cfg.Wallet
	if w.cfg.ClaimWallet != nil {
		if c := w.cfg.ClaimWallet(micro.ID); c != "" {
			wallet = c
		}
	}
	d := out.Disclosure(js.plan(), micro, w.self, wallet, salt)
	c, err := d.Commitment()
	if err != nil {
		return microjob.Disclosure{}, microjob.Commitment{}, err
	}
	w.m.seconds.Observe(time.Since(start).Seconds())
	return d, c, nil
}
