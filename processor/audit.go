package processor

import (
	"context"
	"fmt"

	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/settlement"
)

// A processor signs a settlement only for a verdict it has recomputed.
// Before it signs (audit), it judges the job from its own replica with
// the judge the finalizer runs (re-runs and checks as the judgement
// accepts them), finds it verified with every check settled, and finds an
// eligible verdict record with exactly that verdict, those culprits and
// those rounds; it then assembles the output itself from the results
// (which leaves it holding the output) and requires that record's output
// to be its own. The settlement it derives and signs is the one that
// follows from its own judgement and assembly. Any mismatch is a refusal:
// logged once, counted (jobmesh_processor_sign_refusals_total{reason}),
// and nothing is signed. A verdict whose output is wrong no longer
// finishes the job here: it is finished again, by whoever's turn it is
// (finalizer.go), which writes its own verdict.

// errSignRefused is wrapped by audit when this processor will not sign.
var errSignRefused = settlement.ErrNotSigning

// audit returns the verdict record this processor stands behind for the
// finished job js (its own judgement of recs and its own assembly of the
// output) and its verdict, or an error wrapping errSignRefused.
func (w *Worker) audit(ctx context.Context, js *jobState, recs *finish.Records) (records.VerdictRecord, microjob.Verdict, error) {
	w.mu.Lock()
	id, ver := js.plan().JobID, js.verdicts.auditVer // ver was read before recs (settleVerdicts.Records)
	w.mu.Unlock()
	j, err := w.judged(js, recs, ver)
	if err != nil {
		return records.VerdictRecord{}, microjob.Verdict{}, err
	}
	final, err := w.final(ctx, js, j)
	if err != nil {
		return records.VerdictRecord{}, microjob.Verdict{}, err
	}
	if !final {
		return w.refuseSign(js, finish.MismatchPending, "", "this node's judgement of the job is not final")
	}
	agree, err := w.weigh(ctx, js, recs, j)
	if err != nil {
		return records.VerdictRecord{}, microjob.Verdict{}, err
	}
	if len(agree) == 0 {
		reason, key, detail := w.whyNoVerdict(js, recs, j)
		why := "no verdict record follows from this node's records"
		if detail != "" {
			why += ": " + detail
		}
		return w.refuseSign(js, reason, key, why)
	}
	out, err := w.custody.Assemble(ctx, js.info, js.plan(), j.V, recs)
	if err != nil {
		return records.VerdictRecord{}, microjob.Verdict{}, fmt.Errorf("assembling the output to check the verdict: %w", err)
	}
	own := finish.VerdictFor(j, finish.FinalRounds(js.plan(), recs))
	own.Output = out.String()
	for _, c := range agree {
		if c.Rec.Output != own.Output {
			_, _, _ = w.refuseSign(js, finish.MismatchOutput, keySeq(c.Key, c.Seq), "the verdict's output is not this node's assembly of it")
		}
	}
	if w.checkOutputs(js, agree, own.Output) {
		return own, j.V, nil
	}
	w.unfinish(js, "no verdict names this node's assembly of the output")
	return records.VerdictRecord{}, microjob.Verdict{}, fmt.Errorf("%w: job %s: no verdict names this node's assembly of the output", errSignRefused, id)
}

// whyNoVerdict names what kept every stored verdict of js from agreeing
// with judgement j: what differs in the highest-ranked eligible one, or
// finish.MismatchNone when there is none, and where it differs
// (finish.MismatchDetail).
func (w *Worker) whyNoVerdict(js *jobState, recs *finish.Records, j finish.Judgement) (reason, key, detail string) {
	own := finish.VerdictFor(j, finish.FinalRounds(js.plan(), recs))
	for _, p := range j.Order {
		for _, a := range recs.Verdicts {
			if a.Author != p {
				continue
			}
			w.mu.Lock()
			c, ok := js.verdicts.loaded[keySeq(a.Key, a.Seq)]
			w.mu.Unlock()
			if !ok || c.Err != nil {
				return finish.MismatchBadBody, keySeq(a.Key, a.Seq), ""
			}
			return finish.Mismatch(c.Rec, own), keySeq(a.Key, a.Seq), finish.MismatchDetail(c.Rec, own)
		}
	}
	return finish.MismatchNone, "", ""
}

// refuseSign counts and logs, once per job, reason and record, that this
// processor does not sign js's settlement, and returns the error.
func (w *Worker) refuseSign(js *jobState, reason, key, why string) (records.VerdictRecord, microjob.Verdict, error) {
	k := reason + "/" + key
	w.mu.Lock()
	if js.verdicts.told == nil {
		js.verdicts.told = map[string]bool{}
	}
	told := js.verdicts.told[k]
	js.verdicts.told[k] = true
	w.mu.Unlock()
	if !told {
		w.m.signRefusals.WithLabelValues(reason).Inc()
		w.log.Warn("not signing the settlement: "+why, "job", js.plan().JobID, "reason", reason, "record", key)
	}
	return records.VerdictRecord{}, microjob.Verdict{}, fmt.Errorf("%w: job %s: %s (%s)", errSignRefused, js.plan().JobID, why, reason)
}
