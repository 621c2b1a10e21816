package processor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// settle discloses results once their MacroJob is fully committed, and
// finalizes jobs whose every MicroJob is disclosed. Any of a job's
// finalizers may finalize it; the verdict is a pure function of the
// store, so racing finalizers write the same verdict, each under its own
// key.
func (w *Worker) settle(ctx context.Context) {
	defer w.wg.Done()
	t := time.NewTicker(w.cfg.Poll)
	defer t.Stop()
	for {
		w.disclose(ctx)
		w.finalizeAll(ctx)
		w.settleAll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.index.changed:
			// One pass covers every change so far: the signal coalesces.
		}
	}
}

// records returns a job's records from the index, without the
// disclosures whose wallet is not their author's bound wallet
// (membership.Wallets.Filter) or not a member of the job's escrow
// (membership.View.Filter). The result is shared and must not be modified.
func (w *Worker) records(ctx context.Context, id jobs.ID) (*finish.Records, error) {
	recs, err := w.index.records(ctx, id)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	js := w.known[id]
	w.mu.Unlock()
	return w.members.Filter(ctx, id, infoOf(js), w.wallets.Filter(id, recs))
}

// committed returns the MicroJobs of a job that have at least one
// commitment in the store.
func (w *Worker) committed(ctx context.Context, id jobs.ID) (map[jobs.ID]bool, error) {
	return w.index.committed(ctx, id)
}

// disclose publishes every pending disclosure whose MacroJob has a
// commitment for each of its MicroJobs (commit–reveal: nobody can copy a
// hash it has not committed to before). While a turn is running, a due
// disclosure is held for that turn to write with its commitments, as one
// store delta instead of two: for discloseHold, and longer while the
// running turn is expected to go on (turnEnd, from the number of its
// MicroJobs and their pace), up to maxTurnHold: with turns of ten
// MicroJobs most disclosures come due in the middle of a turn. Holding
// only for a running turn, not while the worker waits in a room for one,
// keeps a job's last disclosures from waiting for turns that never come.
func (w *Worker) disclose(ctx context.Context) { w.discloseAt(ctx, time.Now()) }

// discloseAt is disclose at time now.
func (w *Worker) discloseAt(ctx context.Context, now time.Time) {
	w.discloseMu.Lock()
	defer w.discloseMu.Unlock()
	ready, keep, n := w.dueDisclosures(ctx, nil)
	if len(ready) > 0 && w.turns.Load() > 0 {
		if w.readySince == nil {
			w.readySince = map[string]time.Time{}
		}
		var out []microjob.Disclosure
		for _, d := range ready {
			since, ok := w.readySince[records.DisclosureKey(d)]
			if !ok {
				w.readySince[records.DisclosureKey(d)], since = now, now
			}
			held := now.Sub(since)
			if held >= w.discloseHold() && (!now.Before(w.turnEnd) || held >= maxTurnHold) {
				out = append(out, d)
			} else {
				keep = append(keep, d)
			}
		}
		ready = out
	}
	if len(ready) > 0 {
		if err := w.writer.PutBatch(ctx, discloseEntries(ready)); err != nil {
			keep = append(keep, ready...)
			if ctx.Err() == nil {
				w.log.Warn("writing disclosures", "count", len(ready), "err", err)
			}
		} else {
			w.disclosed(ready)
			w.log.Debug("results disclosed", "count", len(ready))
		}
	}
	w.keepPending(keep, n)
	if len(keep) == 0 {
		clear(w.readySince) // disclosures of retired jobs leave no hold behind
	}
}

// maxDiscloseHold bounds how long a due disclosure waits for a turn to
// carry it, unless the running turn is expected to end later; maxTurnHold
// bounds the wait then.
const (
	maxDiscloseHold = 500 * time.Millisecond
	maxTurnHold     = 5 * time.Second
)

// expectTurn records that a turn of n MicroJobs started at now, at the
// job's pace per (0: unknown), for disclose's hold. The estimate has half
// again as much as the pace says, so that a turn a little slower than the
// last ones still carries what waited for it.
func (w *Worker) expectTurn(now time.Time, n int, per time.Duration) {
	end := now.Add(time.Duration(n) * per * 3 / 2)
	w.discloseMu.Lock()
	if end.After(w.turnEnd) {
		w.turnEnd = end
	}
	w.discloseMu.Unlock()
}

// discloseHold is how long a due disclosure may wait for a turn to carry
// it: Poll, at most maxDiscloseHold.
func (w *Worker) discloseHold() time.Duration {
	return min(w.cfg.Poll, maxDiscloseHold)
}

// dueDisclosures splits pending into the disclosures whose MacroJob is
// fully committed, counting the MicroJobs in also as committed, and the
// rest; n is how many it read. The caller holds discloseMu and puts the
// ones it does not write back with keepPending.
func (w *Worker) dueDisclosures(ctx context.Context, also map[jobs.ID]bool) (ready, keep []microjob.Disclosure, n int) {
	w.mu.Lock()
	pending := slices.Clone(w.pending)
	w.mu.Unlock()
	ready, keep = w.splitDue(ctx, pending, also)
	return ready, keep, len(pending)
}

// splitDue splits ds into the disclosures whose MacroJob is fully
// committed, counting the MicroJobs in also as committed (see
// macroCommitted), and the rest.
func (w *Worker) splitDue(ctx context.Context, ds []microjob.Disclosure, also map[jobs.ID]bool) (ready, keep []microjob.Disclosure) {
	type macroKey struct {
		job   jobs.ID
		macro uint64
	}
	// Whether each MacroJob met is fully committed, asked once per call.
	full := map[macroKey]bool{}
	for _, d := range ds {
		w.mu.Lock()
		js := w.known[d.JobID]
		w.mu.Unlock()
		if js == nil {
			continue
		}
		k := macroKey{d.JobID, d.MacroIndex}
		ok, seen := full[k]
		if !seen {
			var err error
			if ok, err = w.macroCommitted(ctx, js, &js.plan.Macros[d.MacroIndex], also); err != nil {
				keep = append(keep, d)
				continue
			}
			full[k] = ok
		}
		if !ok {
			keep = append(keep, d)
			continue
		}
		ready = append(ready, d)
	}
	return ready, keep
}

// keepPending makes keep the pending disclosures, with those that came in
// since the first n were read.
func (w *Worker) keepPending(keep []microjob.Disclosure, n int) {
	w.mu.Lock()
	w.pending = append(keep, w.pending[n:]...)
	w.mu.Unlock()
}

// disclosed forgets the hold times of written disclosures.
func (w *Worker) disclosed(ds []microjob.Disclosure) {
	for _, d := range ds {
		delete(w.readySince, records.DisclosureKey(d))
	}
}

// discloseEntries are the store entries of disclosures ds.
func discloseEntries(ds []microjob.Disclosure) []crdt.Entry {
	entries := make([]crdt.Entry, len(ds))
	for i, d := range ds {
		entries[i] = crdt.Entry{Key: records.DisclosureKey(d), Type: records.ResultType, Payload: d.Encode()}
	}
	return entries
}

func (w *Worker) finalizeAll(ctx context.Context) {
	w.mu.Lock()
	var open, done []*jobState
	for _, js := range w.known {
		if !js.finished {
			open = append(open, js)
		} else {
			done = append(done, js)
		}
	}
	w.mu.Unlock()
	for _, js := range open {
		if err := w.finalize(ctx, js); err != nil && ctx.Err() == nil {
			w.log.Warn("finalizing", "job", js.plan.JobID, "err", err)
		}
	}
	for _, js := range done {
		if err := w.recheckFinished(ctx, js); err != nil && ctx.Err() == nil {
			w.log.Warn("checking a finished job's verdict again", "job", js.plan.JobID, "err", err)
		}
	}
}

// judge is finish.Judge for js.
func judge(js *jobState, recs *finish.Records) (finish.Judgement, error) {
	return finish.Judge(js.info, js.plan, recs)
}

// judgeEvery is how many Poll periods at least pass between judgements
// of a job whose MicroJobs are not all disclosed yet; judgeSpacing is how
// many times the last judgement's duration at least pass, so that judging
// a large job early takes a small share of the node's time.
const (
	judgeEvery   = 5
	judgeSpacing = 20
)

// finalize judges js when it is due and carries out what finish.Decide
// makes of the judgement.
func (w *Worker) finalize(ctx context.Context, js *jobState) error {
	id := js.plan.JobID
	ver := w.inputsVersion(id)
	now := time.Now()
	if !w.judgeDue(ctx, js, ver, now) {
		return nil
	}
	jv := w.index.judgeVersion(id)
	recs, err := w.records(ctx, id)
	if err != nil {
		return err
	}
	if len(recs.Discl) == 0 {
		return nil
	}
	j, err := w.judged(js, recs, ver)
	if err != nil {
		return err
	}
	w.mu.Lock()
	js.judgeCost = time.Since(now)
	heard := maps.Clone(js.finalizing)
	complete := js.complete
	w.mu.Unlock()
	agree, err := w.weigh(ctx, js, recs, j)
	if err != nil {
		return err
	}
	agree = w.counting(js, agree)
	d := finish.Decide(finish.Input{Judgement: j, Records: recs, Agree: len(agree) > 0, Self: w.self,
		Complete: complete, Finalizing: heard, Now: now, Timing: w.cfg.timing()})
	if d.Step == finish.Finished {
		w.markFinished(js, jv)
		return nil
	}
	for _, rd := range d.Redos {
		if err := crdt.PutJSON(ctx, w.writer, records.RedoKey(id, mustHash(rd.Micro), w.self), records.RedoType, rd); err != nil {
			return err
		}
		w.log.Info("MicroJob to be redone", "job", id, "micro", rd.Micro, "culprits", rd.Exclude)
	}
	if d.Silent {
		if err := w.redoSilent(ctx, js, j.Recs, j.V, now); err != nil {
			return err
		}
	}
	return w.carryOut(ctx, js, d, j, recs, agree, now)
}

// carryOut does what decision d leaves to do with js, judged j from recs
// at now.
func (w *Worker) carryOut(ctx context.Context, js *jobState, d finish.Decision, j finish.Judgement, recs *finish.Records, agree []finish.VerdictCand, now time.Time) error {
	id, v := js.plan.JobID, j.V
	if !d.Complete.IsZero() {
		w.mu.Lock()
		js.complete = d.Complete
		w.mu.Unlock()
	}
	switch d.Step {
	case finish.Idle:
		return nil
	case finish.WaitDisclosures, finish.WaitChecked:
		if d.Step == finish.WaitChecked {
			w.log.Debug("job complete: waiting for the disclosures its checks name", "job", id, "checks", finish.ChecksAhead(j.Recs))
		}
		w.mu.Lock()
		js.graceWait = true
		w.mu.Unlock()
		return nil
	case finish.StandBy:
		w.log.Debug("job complete: standing by for its finalizer", "job", id, "finalizer", j.Order[0], "until", d.Until)
		w.mu.Lock()
		js.graceWait, js.finishing = true, false
		js.standbyUntil = d.Until
		w.mu.Unlock()
		// The runner-up holds the output too when the creator's node
		// cannot (handoff.go).
		return w.holdSecond(ctx, js, j, recs)
	}
	w.mu.Lock()
	js.finishing = true
	w.mu.Unlock()
	w.sayFinalizing(ctx, js, now)
	switch d.Step {
	case finish.Rerun:
		w.log.Debug("job complete: waiting for dispute re-runs", "job", id, "disputes", len(d.Disputes))
		return w.requestReruns(ctx, js, d.Disputes, j.Recs)
	case finish.Unverified:
		w.log.Debug("job complete but not verified", "job", id, "missing", len(v.Missing), "redo", len(v.Redo))
		return nil
	}
	if settled, err := w.requestChecks(ctx, js, v, j.Recs); err != nil || !settled {
		if err == nil {
			w.prefetchResults(js, v, recs)
		}
		w.log.Debug("job complete: waiting for self-check re-runs", "job", id, "err", err)
		return err
	}
	return w.finish(ctx, js, j, recs, agree)
}

// judgeDue reports whether js is to be judged now, its record index at
// version ver. Judging costs O(records), and so does reading them: judge
// when the records changed, and while some MicroJob has no disclosure yet
// only now and then (to catch a culprit early); the grace wait re-judges
// until it is over. A processor standing by for another finalizer judges
// only when a verdict may have come.
func (w *Worker) judgeDue(ctx context.Context, js *jobState, ver uint64, now time.Time) bool {
	id := js.plan.JobID
	w.mu.Lock()
	finishing := js.finishing
	w.mu.Unlock()
	if finishing {
		// Waiting for re-runs is finishing too: say so while the
		// records do not change.
		w.sayFinalizing(ctx, js, now)
	}
	disclosed := w.index.disclosedAll(id, js.plan)
	early := disclosed || w.earlyJudge(js, now)
	verdicts := w.index.hasVerdict(id)
	w.mu.Lock()
	changed := ver != js.judgedVer
	w.mu.Unlock()
	// The runner-up judges again when the finalizer's holder record
	// came in, to hold the output too (handoff.go).
	hold := changed && w.holdDue(ctx, js)
	w.mu.Lock()
	defer w.mu.Unlock()
	if now.Before(js.standbyUntil) && (!changed || !verdicts) && !hold {
		// Another processor is finishing this job: judging it again
		// here would only repeat its work.
		return false
	}
	spacing := max(judgeEvery*w.cfg.Poll, judgeSpacing*js.judgeCost)
	if !early {
		spacing *= lateJudge
	}
	skip := !js.graceWait && ver != 0 && ver == js.judgedVer ||
		!disclosed && now.Sub(js.judgedAt) < spacing
	if !skip {
		js.judgedVer, js.judgedAt, js.graceWait = ver, now, false
	}
	return !skip
}

// redoSilent has MicroJobs redone whose committers went silent: committed,
// their MacroJob fully committed, no valid disclosure, and nothing new
// from any of their committers in the job, for DiscloseGrace (a processor
// that stopped between the two rounds), or for hintLife of them when a
// committer is still connected to this node. They are redone by others, as a
// culprit's are, so the job does not wait for the silent processor
// forever. A committer that keeps writing is alive and only behind: its
// own view may lack its MacroJob's last commitments for long when the
// mesh is loaded, and redoing its MicroJobs then only adds load.
func (w *Worker) redoSilent(ctx context.Context, js *jobState, recs *finish.Records, v microjob.Verdict, now time.Time) error {
	silent := w.groupSilent(ctx, js, finish.SilentCommitters(js.plan, recs, v))
	id := js.plan.JobID
	heard := map[string]time.Time{}
	for _, ps := range silent {
		for _, p := range ps {
			if _, ok := heard[p]; !ok {
				heard[p] = w.index.lastHeard(id, p)
			}
		}
	}
	// Each MicroJob's silence is timed on its own: one MicroJob silent
	// for long must not get another, silent only since its MacroJob's
	// last commitment, redone at once.
	var due []string
	w.mu.Lock()
	since := js.silentSince
	js.silentSince = make(map[string]time.Time, len(silent))
	for m, ps := range silent {
		at, ok := since[m]
		if !ok {
			at = now
		}
		js.silentSince[m] = at
		connected := false
		for _, p := range ps {
			if heard[p].After(at) {
				at = heard[p]
			}
			connected = connected || w.connected(p)
		}
		grace := w.cfg.DiscloseGrace
		if connected {
			// A committer still connected is alive and its records may
			// only be late here; it is given hintLife graces, so that
			// one that withholds its disclosure holds the job up only
			// so long.
			grace *= hintLife
		}
		if now.Sub(at) >= grace {
			due = append(due, m)
		} else {
			js.graceWait = true // judge again when the grace is over
		}
	}
	w.mu.Unlock()
	var entries []crdt.Entry
	slices.Sort(due)
	for _, m := range due {
		if _, ok := recs.Redo[m]; ok {
			continue
		}
		e, err := crdt.JSONEntry(records.RedoKey(id, mustHash(m), w.self), records.RedoType, records.Redo{Micro: m, Exclude: silent[m]})
		if err != nil {
			return err
		}
		entries = append(entries, e)
		w.log.Info("MicroJob to be redone: its committers never disclosed", "job", id, "micro", m, "silent", silent[m])
	}
	if len(entries) == 0 {
		return nil
	}
	return w.writer.PutBatch(ctx, entries)
}

func mustHash(s string) jobs.ID {
	h, _ := jobs.ParseHash(s)
	return h
}

// requestReruns names a third processor for each disputed block: one that
// took part in neither side, chosen by a seeded draw that anyone can
// repeat.
func (w *Worker) requestReruns(ctx context.Context, js *jobState, disputes []microjob.Dispute, recs *finish.Records) error {
	procs, err := w.processors(ctx)
	if err != nil {
		return err
	}
	for _, d := range disputes {
		var dropped []string
		if prev, ok := recs.Dispute[d.Block]; ok {
			// Requested: a third that does not re-run in time is replaced.
			if finish.HasRerun(recs, d.Block, prev.Third) || !w.rerunOverdue(js, "dispute", d.Block, []string{prev.Third}) {
				continue
			}
			dropped = append(slices.Clone(prev.Dropped), prev.Third)
			w.log.Warn("the third processor of a disputed block did not answer; drawing another", "job", js.plan.JobID, "block", d.Block, "silent", prev.Third)
		}
		var pool []string
		for _, p := range procs {
			if p != d.Processors[0] && p != d.Processors[1] && !slices.Contains(dropped, p) {
				pool = append(pool, p)
			}
		}
		if len(pool) == 0 {
			w.log.Warn("no third processor for a disputed block", "job", js.plan.JobID, "block", d.Block)
			w.judgeAgain(js)
			continue
		}
		seed := dispatch.Seed(js.plan.JobID[:], []byte("dispute"), uint64Bytes(d.Block))
		if len(dropped) > 0 {
			seed = dispatch.Seed(seed, uint64Bytes(uint64(len(dropped))))
		}
		i, ok := w.pickThird(js, pool, seed)
		if !ok {
			w.log.Warn("every third processor for a disputed block is kicked out", "job", js.plan.JobID, "block", d.Block)
			w.judgeAgain(js)
			continue
		}
		rec := records.Dispute{Dispute: d, Third: pool[i], Dropped: dropped}
		if err := crdt.PutJSON(ctx, w.writer, records.DisputeKey(js.plan.JobID, d.Block, w.self), records.DisputeType, rec); err != nil {
			return err
		}
		w.log.Info("disputed block sent for a third run", "job", js.plan.JobID, "block", d.Block, "sides", d.Processors, "third", pool[i])
	}
	return nil
}

// judgeAgain has js judged at the next Poll even if its records do not
// change: a re-runner that could not be drawn may be drawn once this
// node's view of the processors changes.
func (w *Worker) judgeAgain(js *jobState) {
	w.mu.Lock()
	js.graceWait = true
	w.mu.Unlock()
}

func uint64Bytes(v uint64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[7-i] = byte(v >> (8 * i))
	}
	return b
}

// processors lists the advertised processors' peer IDs, sorted.
func (w *Worker) processors(ctx context.Context) ([]string, error) {
	return finish.Processors(ctx, w.p.Store)
}

// doReruns runs the disputed blocks assigned to this processor.
func (w *Worker) doReruns(ctx context.Context) bool {
	did := false
	for _, js := range w.openJobs() {
		if !w.index.mayRequest(js.plan.JobID) || !w.requestPass(js, rerunPass) {
			continue
		}
		recs, err := w.accepted(ctx, js)
		if err != nil {
			continue
		}
		asked := map[uint64]bool{}
		for block, d := range recs.Dispute {
			asked[block] = asked[block] || d.Third == w.self
		}
		for block, c := range recs.Checks {
			asked[block] = asked[block] || c.Thirds[0] == w.self || c.Thirds[1] == w.self
		}
		var reruns []crdt.Entry
		for block, mine := range asked {
			if !mine || slices.ContainsFunc(recs.Reruns[block], func(r records.Rerun) bool { return r.Processor == w.self }) {
				continue
			}
			if !w.funded(ctx, js, time.Now()) {
				break // a re-run is work on the job: for its members only
			}
			if err := w.ensureInputs(ctx, js); err != nil {
				w.fail(js, "fetching job inputs", err)
				continue
			}
			off, n, err := js.plan.BlockRange(block)
			if err != nil {
				continue
			}
			w.mu.Lock()
			code, data := js.code, js.data
			w.mu.Unlock()
			out, err := w.exec.Run(ctx, code, data[off:off+n])
			if err != nil {
				w.log.Warn("re-running a disputed block", "job", js.plan.JobID, "block", block, "err", err)
				continue
			}
			if w.cfg.Tamper != nil {
				out = w.cfg.Tamper(block, out)
			}
			sum := sha256.Sum256(out)
			rr := records.Rerun{Block: block, Hash: hex.EncodeToString(sum[:]), Processor: w.self}
			e, err := crdt.JSONEntry(records.RerunKey(js.plan.JobID, block, w.self), records.RerunType, rr)
			if err != nil {
				continue
			}
			reruns = append(reruns, e)
		}
		// A job's re-runs go out as one store batch.
		if len(reruns) == 0 {
			continue
		}
		if err := w.writer.PutBatch(ctx, reruns); err != nil {
			w.log.Warn("writing re-runs", "job", js.plan.JobID, "count", len(reruns), "err", err)
			continue
		}
		w.log.Info("re-ran disputed or self-checked blocks", "job", js.plan.JobID, "blocks", len(reruns))
		did = true
	}
	return did
}

// doRedos runs MicroJobs marked for redoing that this processor may take
// and has not run; the result is committed and disclosed at once (the
// MacroJob's other commitments are long in).
func (w *Worker) doRedos(ctx context.Context) bool {
	for _, js := range w.openJobs() {
		if !w.index.mayRequest(js.plan.JobID) || !w.requestPass(js, redoPass) {
			continue
		}
		recs, err := w.accepted(ctx, js)
		if err != nil || len(recs.Redo) == 0 {
			continue
		}
		for _, rd := range recs.Redo {
			if slices.Contains(rd.Exclude, w.self) || !w.mayRedo(ctx, js, rd) || !w.redoTurn(js, rd) {
				continue
			}
			mid, err := jobs.ParseHash(rd.Micro)
			if err != nil {
				continue
			}
			if slices.ContainsFunc(recs.Discl, func(d microjob.Disclosure) bool {
				return d.MicroID == mid && !slices.Contains(rd.Exclude, d.Processor)
			}) {
				continue // someone already redid it
			}
			if slices.ContainsFunc(recs.Commits, func(c microjob.Commitment) bool {
				return c.MicroID == mid && c.Processor == w.self
			}) {
				// Committed here already (in its room, before the redo
				// was asked for): its disclosure is on its way. A second
				// run would commit again under another salt, and two
				// commitments of one MicroJob by one processor void both.
				continue
			}
			micro, err := js.plan.MicroJob(mid)
			if err != nil {
				continue
			}
			if !w.funded(ctx, js, time.Now()) {
				break // a redo is work on the job: for its members only
			}
			if err := w.ensureInputs(ctx, js); err != nil {
				w.fail(js, "fetching job inputs", err)
				continue
			}
			d, c, err := w.run(ctx, js, micro)
			if err != nil {
				w.fail(js, "redoing MicroJob", err)
				continue
			}
			// The rest of the MacroJob is disclosed already: the
			// commitment and the disclosure go out together.
			if err := w.writer.PutBatch(ctx, []crdt.Entry{
				{Key: records.CommitmentKey(c), Type: records.CommitType, Payload: c.Encode()},
				{Key: records.DisclosureKey(d), Type: records.ResultType, Payload: d.Encode()},
			}); err != nil {
				continue
			}
			w.log.Info("redid MicroJob", "job", js.plan.JobID, "micro", mid)
			return true
		}
	}
	return false
}

// redoTurn reports whether it is this processor's turn to redo rd. The
// live processors that may take it are ranked by a hash of their peer ID
// with the job and the MicroJob (rendezvous hashing, the same ranking on
// every node): the first redoes it at once, the k-th only once the redo
// has waited k MicroJob processing timeouts since this node first saw it
// (those before it may have stopped). Without the ranking every processor
// redoes every redone MicroJob at once. A replicated job's redos are
// taken by any processor mayRedo admits.
func (w *Worker) redoTurn(js *jobState, rd records.Redo) bool {
	if replicated(js) {
		return true
	}
	v := w.dview.Load()
	w.mu.Lock()
	if js.redoView != v {
		js.redoRanks, js.redoView = map[string]int{}, v
	}
	key := rd.Micro + "/" + strings.Join(rd.Exclude, ",")
	rank, ok := js.redoRanks[key]
	w.mu.Unlock()
	if !ok {
		rank = w.redoRank(js, rd, v)
		w.mu.Lock()
		js.redoRanks[key] = rank
		w.mu.Unlock()
	}
	if rank == 0 {
		return true
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if js.redoSeen == nil {
		js.redoSeen = map[string]time.Time{}
	}
	seen, ok := js.redoSeen[rd.Micro]
	if !ok {
		js.redoSeen[rd.Micro], seen = now, now
	}
	return now.Sub(seen) >= time.Duration(rank)*w.processingTimeout()
}

// redoRank is this processor's place in redoTurn's ranking for rd in
// dispatch view v.
func (w *Worker) redoRank(js *jobState, rd records.Redo, v *View) int {
	self := hashOf(w.self, js.plan.JobID.String(), rd.Micro, "redo")
	rank := 0
	if v != nil {
		r := js.info.Requirements
		for _, p := range v.Processors {
			if p.ID == w.self || p.Kick != nil || slices.Contains(rd.Exclude, p.ID) ||
				r.GPUModel != "" && r.GPUModel != p.CardModel || p.VRAM < r.MinVRAMMiB {
				continue
			}
			if h := hashOf(p.ID, js.plan.JobID.String(), rd.Micro, "redo"); bytes.Compare(h[:], self[:]) > 0 {
				rank++
			}
		}
	}
	return rank
}

// The kinds of request pass (requestPass).
const (
	redoPass = iota
	rerunPass
)

// requestPass reports whether a pass over js's requests of kind k
// (redoPass, rerunPass) is due: the job's dispute, self-check, redo or
// re-run records changed since the last pass, or a Poll has gone by (a
// takeover may have come due, or a redo been done). The worker steps far
// more often than either, and a pass reads all the job's records.
func (w *Worker) requestPass(js *jobState, k int) bool {
	ver := w.index.requestsVersion(js.plan.JobID)
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if ver != 0 && ver == js.requestsVer[k] && now.Sub(js.requestsAt[k]) < w.cfg.Poll {
		return false
	}
	js.requestsVer[k], js.requestsAt[k] = ver, now
	return true
}

// processingTimeout is how long a locked MicroJob may run before its
// queue offers it again.
func (w *Worker) processingTimeout() time.Duration {
	if p := w.cfg.Room.Queue.ProcessingTimeout; p > 0 {
		return p
	}
	return macrojob.DefaultConfig().ProcessingTimeout
}

func (w *Worker) openJobs() []*jobState {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*jobState
	for _, js := range w.known {
		if !js.finished {
			out = append(out, js)
		}
	}
	return out
}
