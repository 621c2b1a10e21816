package processor

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
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
		w.aggregate(ctx)
		w.finalizeAll(ctx)
		w.settleAll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.index.Changed():
			// One pass covers every change so far: the signal coalesces.
		}
	}
}

// records returns a job's records from the index, without the
// disclosures whose wallet is not their author's bound wallet
// (membership.Wallets.Filter) or not a member of the job's escrow
// (membership.View.Filter). The result is shared and must not be modified.
func (w *Worker) records(ctx context.Context, id jobs.ID) (*finish.Records, error) {
	recs, err := w.index.Records(ctx, id)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	js := w.known[id]
	w.mu.Unlock()
	filtered, err := w.members.Filter(ctx, id, infoOf(js), w.wallets.Filter(id, recs))
	if err != nil {
		return nil, err
	}
	cands, err := w.rerunCandidates(ctx, infoOf(js))
	if err != nil {
		return nil, err
	}
	out := *filtered
	out.Candidates = cands
	return &out, nil
}

func (w *Worker) finalizeAll(ctx context.Context) {
	w.mu.Lock()
	var open, done []*jobState
	for _, js := range w.known {
		if failedLocked(js) {
			continue
		}
		if !js.finished {
			open = append(open, js)
		} else {
			done = append(done, js)
		}
	}
	w.mu.Unlock()
	for _, js := range open {
		if err := w.finalize(ctx, js); err != nil && ctx.Err() == nil {
			w.log.Warn("finalizing", "job", js.plan().JobID, "err", err)
		}
	}
	for _, js := range done {
		if err := w.recheckFinished(ctx, js); err != nil && ctx.Err() == nil {
			w.log.Warn("checking a finished job's verdict again", "job", js.plan().JobID, "err", err)
		}
	}
}

// judge is finish.Judge for js.
func judge(js *jobState, recs *finish.Records) (finish.Judgement, error) {
	return finish.Judge(js.info, js.plan(), recs)
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
	w.drawChecks(ctx, js)
	w.mu.Lock()
	pending := js.checks == finish.CheckPending
	w.mu.Unlock()
	if pending {
		return nil // nothing is disclosed or judged before the checks are drawn
	}
	id := js.plan().JobID
	ver := w.inputsVersion(id)
	now := w.now()
	if !w.judgeDue(ctx, js, ver, now) {
		return nil
	}
	jv := w.index.JudgeVersion(id)
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
	js.judgeCost = w.now().Sub(now)
	complete := js.complete
	w.mu.Unlock()
	heard := js.hints.Finalizers()
	agree, err := w.weigh(ctx, js, recs, j)
	if err != nil {
		return err
	}
	agree = w.counting(js, agree)
	d := finish.Decide(finish.Input{Judgement: j, Records: recs, Agree: len(agree) > 0, Self: w.self,
		Complete: complete, Finalizing: heard, Now: now, Timing: w.cfg.timing()})
	if d.Step == finish.Finished {
		return w.finished(ctx, js, recs, agree, jv)
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
	return w.carryOut(ctx, js, d, j, recs, agree, now, jv)
}

// carryOut does what decision d leaves to do with js, judged j from recs
// (read at judge version jv) at now.
func (w *Worker) carryOut(ctx context.Context, js *jobState, d finish.Decision, j finish.Judgement, recs *finish.Records, agree []finish.VerdictCand, now time.Time, jv uint64) error {
	id, v := js.plan().JobID, j.V
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
		// cannot (custody).
		return w.custody.HoldSecond(ctx, js.info, js.plan(), j, recs, func(ctx context.Context) (bool, error) { return w.final(ctx, js, j) })
	}
	w.mu.Lock()
	js.finishing = true
	w.mu.Unlock()
	w.sayFinalizing(ctx, js, now)
	w.sayUndecided(js, v)
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
			w.custody.Prefetch(id, v, recs)
		}
		w.log.Debug("job complete: waiting for self-check re-runs", "job", id, "err", err)
		return err
	}
	return w.finish(ctx, js, j, recs, agree, jv)
}

// inputsVersion returns a number that changes whenever what judging job
// id reads does: its records (Index.Version), and the wallet bindings and
// escrow memberships that decide which disclosures count. A disclosure
// that came before its processor's binding counts once the binding does;
// 0 while the job's index is not loaded.
func (w *Worker) inputsVersion(id jobs.ID) uint64 {
	v := w.index.Version(id)
	if v == 0 {
		return 0
	}
	var b [24]byte
	binary.BigEndian.PutUint64(b[0:], v)
	binary.BigEndian.PutUint64(b[8:], w.wallets.Version())
	binary.BigEndian.PutUint64(b[16:], w.members.Version())
	h := fnv.New64a()
	h.Write(b[:])
	return h.Sum64() | 1
}

// judgeDue reports whether js is to be judged now, its record index at
// version ver. Judging costs O(records), and so does reading them: judge
// when the records changed, and while some MicroJob has no disclosure yet
// only now and then (to catch a culprit early); the grace wait re-judges
// until it is over. A processor standing by for another finalizer judges
// only when a verdict may have come.
func (w *Worker) judgeDue(ctx context.Context, js *jobState, ver uint64, now time.Time) bool {
	id := js.plan().JobID
	w.mu.Lock()
	finishing := js.finishing
	w.mu.Unlock()
	if finishing {
		// Waiting for re-runs is finishing too: say so while the
		// records do not change.
		w.sayFinalizing(ctx, js, now)
	}
	p, loaded := w.index.LoadedProgress(id, 1)
	disclosed := loaded && p.DisclosedAll(js.plan())
	early := disclosed || w.earlyJudge(js, p, now)
	verdicts := w.index.HasVerdict(id)
	w.mu.Lock()
	changed := ver != js.judgedVer
	w.mu.Unlock()
	// The runner-up judges again when the finalizer's holder record
	// came in, to hold the output too (custody).
	hold := changed && w.custody.HoldDue(ctx, id)
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

// redoSilent has MicroJobs redone whose committers went silent
// (finish.RedoSilent): committed, their MacroJob's commitment round over,
// no valid disclosure, and nothing new from their committers for
// DiscloseGrace, or for finish.HintLife graces while a committer is still
// connected to this node.
func (w *Worker) redoSilent(ctx context.Context, js *jobState, recs *finish.Records, v microjob.Verdict, now time.Time) error {
	silent := w.groups.Silent(ctx, js.info, js.plan(), finish.SilentCommitters(js.plan(), recs, v))
	id := js.plan().JobID
	heard, connected := map[string]time.Time{}, map[string]bool{}
	for _, ps := range silent {
		for _, p := range ps {
			if _, ok := heard[p]; !ok {
				heard[p], connected[p] = w.index.LastHeard(id, p), w.connected(p)
			}
		}
	}
	w.mu.Lock()
	s := finish.RedoSilent(finish.Silence{Silent: silent, Since: js.silentSince, Heard: heard, Connected: connected,
		Grace: w.cfg.DiscloseGrace, ConnectedGrace: w.cfg.DiscloseGrace * finish.HintLife, Redo: recs.Redo, Now: now})
	js.silentSince = s.Since
	js.graceWait = js.graceWait || s.Wait // judge again when a grace is over
	w.mu.Unlock()
	entries := make([]crdt.Entry, 0, len(s.Redos))
	for _, rd := range s.Redos {
		e, err := crdt.JSONEntry(records.RedoKey(id, mustHash(rd.Micro), w.self), records.RedoType, rd)
		if err != nil {
			return err
		}
		entries = append(entries, e)
		w.log.Info("MicroJob to be redone: its committers never disclosed", "job", id, "micro", rd.Micro, "silent", rd.Exclude)
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

// requestReruns writes the next request of each disputed block
// (finish.Escalation.NextRequest): a first round of re-runners, another
// round while the vote has no decisive margin, and replacements for
// re-runners that did not answer within RerunTimeout. Re-runners are the
// next of the block's rerun order over the candidates (finish.RerunOrder),
// which every reader checks.
func (w *Worker) requestReruns(ctx context.Context, js *jobState, disputes []microjob.Dispute, recs *finish.Records) error {
	id, esc := js.plan().JobID, finish.EscalationFor(js.plan())
	seen := map[uint64]bool{}
	for _, d := range disputes {
		if seen[d.Block] {
			continue // one request per block
		}
		seen[d.Block] = true
		r := esc.RuleOf(recs, d)
		var prev *records.Dispute
		var silent []string
		if p, ok := recs.Dispute[d.Block]; ok {
			prev = &p
			for _, q := range finish.DisputeRerunners(p) {
				if !finish.HasRerun(recs, d.Block, q) {
					silent = append(silent, q)
				}
			}
			if r.Outcome == finish.VotePending && !w.rerunOverdue(js, "dispute", d.Block, finish.DisputeRerunners(p)) {
				continue
			}
			if r.Outcome != finish.VotePending {
				silent = nil
			} else {
				w.log.Warn("re-runners of a disputed block did not answer; drawing others", "job", id, "block", d.Block, "silent", silent)
			}
		}
		rec, ok := esc.NextRequest(id, d, prev, r, silent, recs.Candidates, w.unable)
		if !ok {
			w.log.Warn("no re-runner left to draw for a disputed block", "job", id, "block", d.Block, "votes", r.Tally)
			w.judgeAgain(js)
			continue
		}
		if err := crdt.PutJSON(ctx, w.writer, records.DisputeKey(id, d.Block, w.self), records.DisputeType, rec); err != nil {
			return err
		}
		w.ask(ctx, id, finish.DisputeRerunners(rec))
		w.log.Info("disputed block sent for re-runs", "job", id, "block", d.Block, "sides", d.Processors,
			"rerunners", finish.DisputeRerunners(rec), "dropped", rec.Dropped, "exhausted", rec.Exhausted)
	}
	return nil
}

// sayUndecided logs, once per dispute, each disputed block of v that no
// vote decided: the job cannot be verified, and nobody is culprit for it.
func (w *Worker) sayUndecided(js *jobState, v microjob.Verdict) {
	for _, u := range v.Undecided {
		if w.firstSaid(js, "undecided/"+strconv.FormatUint(u.Dispute.Block, 10)+"/"+strings.Join(u.Dispute.Processors[:], ",")) {
			w.log.Warn("disputed block undecided: the job cannot be verified", "job", js.plan().JobID, "block", u.Dispute.Block,
				"sides", u.Dispute.Processors, "votes", len(u.Votes)+2, "reason", u.Reason)
		}
	}
}

// firstSaid reports whether key is said of js for the first time, and
// notes it (in rerunSeen, beside the re-run requests it ends).
func (w *Worker) firstSaid(js *jobState, key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if js.rerunSeen == nil {
		js.rerunSeen = map[string]time.Time{}
	}
	if _, said := js.rerunSeen[key]; said {
		return false
	}
	js.rerunSeen[key] = w.now()
	return true
}

// judgeAgain has js judged at the next Poll even if its records do not
// change: a re-runner that could not be drawn may be drawn once this
// node's view of the processors changes.
func (w *Worker) judgeAgain(js *jobState) {
	w.mu.Lock()
	js.graceWait = true
	w.mu.Unlock()
}

// processors lists the advertised processors' peer IDs, sorted.
func (w *Worker) processors(ctx context.Context) ([]string, error) {
	return finish.Processors(ctx, w.p.Store)
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
	v := w.dview.Load()
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*jobState
	for _, js := range w.known {
		if !js.finished && !v.Settled(js.plan().JobID) {
			out = append(out, js)
		}
	}
	return out
}
