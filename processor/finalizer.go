package processor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// Finishing a complete job (asking for re-runs, assembling the output,
// writing the verdict) is one processor's work: the designated finalizer.
// Every processor ranks the job's finalizers the same way from the same
// records (finish.FinalizerOrder); while one is finishing the job it says so on
// the Job channel (a "finalizing" message) at least every quarter of
// FinalizeTakeover. A processor of rank k stands by while the job has
// been complete for less than k × FinalizeTakeover, and while a processor
// ranked above it was heard finishing the job within FinalizeTakeover. So
// a finalizer that stopped is replaced by the next in rank, one at a
// time, and a live one that takes long (a large output to fetch) is not
// raced by every other processor of the job. A processor that keeps
// saying it is finishing the job without ever writing a verdict is waited
// for at most finalizeLimit after the job is complete.

// earlyJudge reports whether this processor is the one expected to judge
// js while some MicroJob has no disclosure yet (to catch a culprit or a
// silent committer early): of itself and the processors working on the
// job that are still alive, the one with the highest finalizer hash
// (finish.FinalizerOrder's hash). Those working are the ones heard on the
// Job channel (rooms' owners saying progress) and the committers in p, the
// job's progress in the store. The others judge such a job lateJudge times
// less often, in case it is gone: every processor judging a large job all
// the time repeated the same work on each.
func (w *Worker) earlyJudge(js *jobState, p finish.Progress, now time.Time) bool {
	id := js.plan().JobID.String()
	active := js.hints.Active()
	if active == nil {
		active = map[string]time.Time{}
	}
	for q := range p.Active() {
		if _, ok := active[q]; !ok {
			active[q] = time.Time{} // alive asks the store when it was last heard
		}
	}
	best := records.RankHash(w.self, id, "finalizer")
	for q, last := range active {
		if q == w.self {
			continue
		}
		if h := records.RankHash(q, id, "finalizer"); bytes.Compare(h[:], best[:]) > 0 && w.alive(js, q, last, now) {
			return false
		}
	}
	return true
}

// lateJudge is how many times less often a processor that is not
// earlyJudge's choice judges a job not yet fully disclosed.
const lateJudge = 10

// finalizeLimit is how long after a job is complete heard "finalizing"
// messages keep a processor standing by.
func (c Config) finalizeLimit() time.Duration {
	return 2*c.RerunTimeout + finish.HintLife*c.finalizeTakeover()
}

// standby is finish.Standby for this node and js, with the
// "finalizing" messages heard on js's Job channel.
func (w *Worker) standby(js *jobState, order []string, waited time.Duration, now time.Time) (time.Time, bool) {
	return finish.Standby(order, w.self, waited, now, js.hints.Finalizers(), w.cfg.timing())
}

// timing is the durations the finishing rules wait for.
func (c Config) timing() finish.Timing {
	return finish.Timing{DuplicateGrace: c.duplicateGrace(), RerunTimeout: c.RerunTimeout, Takeover: c.finalizeTakeover(), Limit: c.finalizeLimit()}
}

// sayFinalizing tells js's Job channel that this node is finishing the
// job, at most once per quarter of FinalizeTakeover.
func (w *Worker) sayFinalizing(ctx context.Context, js *jobState, now time.Time) {
	w.mu.Lock()
	t := js.topic
	due := now.Sub(js.saidFinalizing) >= w.cfg.finalizeTakeover()/4
	if due {
		js.saidFinalizing = now
	}
	w.mu.Unlock()
	if t == nil {
		t = w.jobChannel(ctx, js)
	}
	if due && t != nil {
		_ = t.Publish(ctx, jobs.ChannelMsg{Kind: jobs.KindFinalizing, JobID: js.plan().JobID.String(), Processor: w.self})
	}
}

// keepSayingFinalizing says that this node is finishing js until stop is
// called: for work that holds the settle loop, such as the output
// assembly.
func (w *Worker) keepSayingFinalizing(ctx context.Context, js *jobState) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(w.cfg.finalizeTakeover() / 4)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				w.sayFinalizing(ctx, js, now)
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// verdictState is what a worker found of one job's verdicts and requests;
// guarded by Worker.mu.
type verdictState struct {
	// judgedVer is the index version judgement was made at (0: none).
	// A caller reads the version before the records it judges, so that a
	// record arriving in between leaves a judgement filed under the older
	// version, judged again next time, never a stale one under the newer.
	judgedVer uint64
	judgement finish.Judgement
	// auditVer is the version read before the records the settler last
	// read (settleVerdicts.Records), which audit judges.
	auditVer uint64
	// agreedVer is the index's judge version when this node last found
	// a verdict that follows from its records (recheckFinished), and
	// finishedAt when it first did.
	agreedVer  uint64
	finishedAt time.Time
	// loaded are verdict records opened, by key and seq.
	loaded map[string]finish.VerdictCand
	// badOutput are verdict records, by key and seq, whose output is not
	// this node's assembly of their verdict (audit.go).
	badOutput map[string]bool
	// counted are the refusals counted (by key, seq and reason), told
	// the sign refusals logged.
	counted, told map[string]bool
}

func keySeq(key string, seq uint64) string { return key + "@" + strconv.FormatUint(seq, 10) }

// judged returns js's judgement of recs, read at index version ver: the
// one made at ver when there is one. It counts the requests it refuses.
func (w *Worker) judged(js *jobState, recs *finish.Records, ver uint64) (finish.Judgement, error) {
	w.mu.Lock()
	if ver != 0 && js.verdicts.judgedVer == ver {
		j := js.verdicts.judgement
		w.mu.Unlock()
		return j, nil
	}
	w.mu.Unlock()
	j, err := judge(js, recs)
	if err != nil {
		return j, err
	}
	w.mu.Lock()
	js.verdicts.judgedVer, js.verdicts.judgement = ver, j
	w.mu.Unlock()
	w.countRefused(js, j.Refused)
	return j, nil
}

// countRefused counts each refused record once per reason.
func (w *Worker) countRefused(js *jobState, rs []finish.Refusal) {
	for _, r := range rs {
		k := keySeq(r.Key, r.Seq) + "/" + r.Reason
		w.mu.Lock()
		if js.verdicts.counted == nil {
			js.verdicts.counted = map[string]bool{}
		}
		seen := js.verdicts.counted[k]
		js.verdicts.counted[k] = true
		w.mu.Unlock()
		if !seen {
			w.m.refused.WithLabelValues(r.Kind, r.Reason).Inc()
			w.log.Warn("record refused", "job", js.plan().JobID, "key", r.Key, "type", r.Kind, "reason", r.Reason)
		}
	}
}

// final reports whether judgement j of js is one a verdict may follow
// from (judgement.final), reading the advertised processors only when a
// check is unsettled.
func (w *Worker) final(ctx context.Context, js *jobState, j finish.Judgement) (bool, error) {
	if !j.V.Verified {
		return false, nil
	}
	if !finish.ChecksPending(js.plan(), j.V, j.Recs) {
		return true, nil
	}
	procs, err := w.processors(ctx)
	if err != nil {
		return false, err
	}
	return j.Final(js.plan(), procs), nil
}

// weigh returns the verdicts of js that follow from recs and judgement j
// (as far as the reader can tell without the output), highest-ranked
// author first; it counts the refused ones.
func (w *Worker) weigh(ctx context.Context, js *jobState, recs *finish.Records, j finish.Judgement) ([]finish.VerdictCand, error) {
	if len(recs.Verdicts) == 0 {
		return nil, nil
	}
	final, err := w.final(ctx, js, j)
	if err != nil {
		return nil, err
	}
	agree, refused := finish.WeighVerdicts(js.plan().JobID, recs, j, finish.FinalRounds(js.plan(), recs), final, w.verdictLoader(ctx, js))
	w.countRefused(js, refused)
	return agree, nil
}

// verdictLoader opens js's verdict records, each once (by key and seq)
// unless its body could not be fetched.
func (w *Worker) verdictLoader(ctx context.Context, js *jobState) func(finish.Authored[[]byte]) finish.VerdictCand {
	return func(a finish.Authored[[]byte]) finish.VerdictCand {
		k := keySeq(a.Key, a.Seq)
		w.mu.Lock()
		c, ok := js.verdicts.loaded[k]
		w.mu.Unlock()
		if ok {
			return c
		}
		c = finish.LoadCand(ctx, a, w.custody.Bodies())
		if !errors.Is(c.Err, records.ErrBodyUnavailable) {
			w.mu.Lock()
			if js.verdicts.loaded == nil {
				js.verdicts.loaded = map[string]finish.VerdictCand{}
			}
			js.verdicts.loaded[k] = c
			w.mu.Unlock()
		}
		return c
	}
}

// counting leaves out of agree the verdicts whose output this node found
// is not its assembly of their verdict: those do not finish the job here.
func (w *Worker) counting(js *jobState, agree []finish.VerdictCand) []finish.VerdictCand {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.DeleteFunc(agree, func(c finish.VerdictCand) bool { return js.verdicts.badOutput[keySeq(c.Key, c.Seq)] })
}

// markFinished marks js finished: a verdict that follows from this node's
// records exists (judge version jv). A worker waiting for one of its
// rooms stops waiting.
func (w *Worker) markFinished(js *jobState, jv uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	js.verdicts.agreedVer = jv
	if js.finished {
		return
	}
	js.finished, js.verdicts.finishedAt = true, w.now()
	w.stops++
	if js.stopWait != nil {
		js.stopWait()
	}
	w.log.Info("job finished", "job", js.plan().JobID)
}

// unfinish reopens js: the verdict it was finished by no longer follows
// from this node's records (a record came after it), or names an output
// that is not the assembly of its verdict. The job is judged again, and
// its finalizers take their turns afresh.
func (w *Worker) unfinish(js *jobState, why string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !js.finished {
		return
	}
	js.finished, js.finalizer = false, false
	js.complete, js.judgedVer, js.standbyUntil = time.Time{}, 0, time.Time{}
	w.log.Warn("finishing the job again", "job", js.plan().JobID, "why", why)
}

// recheckFinished judges a finished job again when the records it reads
// changed since a verdict last followed from them, and reopens it when
// none does any more. A job whose index was forgotten is not rechecked.
func (w *Worker) recheckFinished(ctx context.Context, js *jobState) error {
	id := js.plan().JobID
	jv := w.index.JudgeVersion(id)
	w.mu.Lock()
	same := jv == js.verdicts.agreedVer
	w.mu.Unlock()
	if jv == 0 || same {
		return nil
	}
	ver := w.inputsVersion(id)
	recs, err := w.records(ctx, id)
	if err != nil {
		return err
	}
	j, err := w.judged(js, recs, ver)
	if err != nil {
		return err
	}
	agree, err := w.weigh(ctx, js, recs, j)
	if err != nil {
		return err
	}
	agree = w.counting(js, agree)
	if len(agree) == 0 {
		w.unfinish(js, "no verdict follows from this node's records any more")
		return nil
	}
	return w.finished(ctx, js, recs, agree, jv)
}

// finished marks js finished (markFinished): the verdicts agree follow
// from recs. This node's own verdict record, when it is not one of them
// (finish.Superseded), is withdrawn first.
func (w *Worker) finished(ctx context.Context, js *jobState, recs *finish.Records, agree []finish.VerdictCand, jv uint64) error {
	if own, ok := finish.Superseded(w.self, recs, agree, w.verdictLoader(ctx, js)); ok {
		if err := w.writer.Delete(ctx, own.Key); err != nil {
			return fmt.Errorf("withdrawing the superseded verdict %s: %w", own.Key, err)
		}
		w.log.Info("own verdict withdrawn: it no longer follows, another does", "job", js.plan().JobID, "seq", own.Seq)
	}
	w.markFinished(js, jv)
	return nil
}

// accepted returns js's records as this node's latest judgement of them
// accepts them (judged): the requests of eligible authors only.
func (w *Worker) accepted(ctx context.Context, js *jobState) (*finish.Records, error) {
	id := js.plan().JobID
	ver := w.inputsVersion(id)
	recs, err := w.records(ctx, id)
	if err != nil {
		return nil, err
	}
	j, err := w.judged(js, recs, ver)
	if err != nil {
		return nil, err
	}
	return j.Recs, nil
}

// finish is the end of finalizing js, verified with judgement j: it
// assembles the output and, once a second node holds it too (HandedOff),
// writes this node's verdict record, unless a verdict that follows from
// the records (agree) names that output. jv is the judge version read
// before recs: a record that arrives while the output is assembled makes
// recheckFinished judge the job again.
func (w *Worker) finish(ctx context.Context, js *jobState, j finish.Judgement, recs *finish.Records, agree []finish.VerdictCand, jv uint64) error {
	id := js.plan().JobID
	start := w.now()
	stop := w.keepSayingFinalizing(ctx, js)
	out, err := w.custody.Assemble(ctx, js.info, js.plan(), j.V, recs)
	stop()
	if err != nil {
		return err
	}
	assembly := w.now().Sub(start)
	if w.checkOutputs(js, agree, out.String()) {
		return w.finished(ctx, js, recs, w.counting(js, agree), jv)
	}
	if w.cfg.BeforeVerdict != nil && !w.cfg.BeforeVerdict(id) {
		w.judgeAgain(js)
		return nil
	}
	// A second node holds the output before the verdict is written, so
	// that losing this one loses nothing (custody).
	if ok, err := w.custody.HandedOff(ctx, id, j.V, out, w.now()); err != nil || !ok {
		w.judgeAgain(js)
		return err
	}
	rec := records.VerdictRecord{Verdict: json.RawMessage(j.V.Encode()), Culprits: j.Culprits, Output: out.String(), Rounds: finish.FinalRounds(js.plan(), recs)}
	if rec, err = w.custody.VerdictRecord(ctx, id, rec); err != nil {
		return err
	}
	if err := crdt.PutJSON(ctx, w.writer, records.VerdictKey(id, w.self), records.VerdictType, rec); err != nil {
		return err
	}
	w.mu.Lock()
	js.finalizer = true
	w.mu.Unlock()
	w.markFinished(js, jv)
	w.m.finalized.Inc()
	w.log.Info("job verified", "job", id, "output", out, "culprits", j.Culprits, "assembly", assembly)
	return nil
}

// checkOutputs compares the outputs of verdicts that follow from the
// records (agree) with out, this node's assembly, and reports whether one
// names it. Those that name another are refused (counted once) and no
// longer finish the job here (counting).
func (w *Worker) checkOutputs(js *jobState, agree []finish.VerdictCand, out string) bool {
	match := false
	var wrong []finish.Refusal
	for _, c := range agree {
		if c.Rec.Output == out {
			match = true
			continue
		}
		wrong = append(wrong, finish.Refusal{Key: c.Key, Kind: records.VerdictType, Reason: finish.MismatchOutput, Seq: c.Seq})
	}
	if len(wrong) > 0 {
		w.mu.Lock()
		if js.verdicts.badOutput == nil {
			js.verdicts.badOutput = map[string]bool{}
		}
		for _, r := range wrong {
			js.verdicts.badOutput[keySeq(r.Key, r.Seq)] = true
		}
		w.mu.Unlock()
		w.countRefused(js, wrong)
	}
	return match
}
