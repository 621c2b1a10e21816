package finish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// A verdict counts only when its author may write it (a finalizer of the
// job: FinalizerOrder) and it follows from the reader's own records: the
// reader judges the job itself, finds it verified with every check it
// waits for settled (ChecksSettled), and the record holds exactly that
// verdict, those culprits and those rounds. Among the verdicts that
// count, the highest-ranked author's is reported, or, once the job is
// settled on chain, the one whose output the settlement names. The
// output CID is checked where the output is assembled: by the designated
// finalizer before it lets another's verdict stand, and by every signer
// (the processor's audit).

// Why a signer or a reader refuses a verdict record (the reason label of
// jobmesh_processor_sign_refusals_total, and what Mismatch says).
const (
	MismatchVerdict  = "verdict"  // its verdict is not the reader's
	MismatchCulprits = "culprits" // its culprits are not the reader's
	MismatchRounds   = "rounds"   // its submission rounds are not the reader's
	MismatchOutput   = "output"   // its output is not the reader's assembly
	MismatchNone     = "missing"  // no eligible verdict record at all
	MismatchPending  = "pending"  // the reader's own judgement is not final
	MismatchBadBody  = "unreadable"
)

// VerdictCand is one stored verdict record, loaded.
type VerdictCand struct {
	Authored[[]byte]
	Rec records.VerdictRecord
	V   microjob.Verdict
	Err error // loading failed
}

// VerdictFor is the record a reader with judgement j and rounds would
// write, without its output.
func VerdictFor(j Judgement, rounds []records.RoundOrder) records.VerdictRecord {
	return records.VerdictRecord{Verdict: j.V.Encode(), Culprits: j.Culprits, Rounds: rounds}
}

// Mismatch says what differs between a stored record and own, the
// record the reader would write ("" when nothing but the output, which it
// does not compare, differs).
func Mismatch(stored, own records.VerdictRecord) string {
	switch {
	case !bytes.Equal(stored.Verdict, own.Verdict):
		return MismatchVerdict
	case !slices.Equal(stored.Culprits, own.Culprits):
		return MismatchCulprits
	case !equalRounds(stored.Rounds, own.Rounds):
		return MismatchRounds
	}
	return ""
}

// MismatchDetail says where stored and own first differ, for a log line:
// the culprits of each, or the first MacroJob whose rounds differ ("" when
// Mismatch finds nothing, or the verdicts themselves differ).
func MismatchDetail(stored, own records.VerdictRecord) string {
	switch Mismatch(stored, own) {
	case MismatchCulprits:
		return fmt.Sprintf("culprits %v, this node's %v", stored.Culprits, own.Culprits)
	case MismatchRounds:
		for i := range max(len(stored.Rounds), len(own.Rounds)) {
			var a, b records.RoundOrder
			if i < len(stored.Rounds) {
				a = stored.Rounds[i]
			}
			if i < len(own.Rounds) {
				b = own.Rounds[i]
			}
			if !equalRounds([]records.RoundOrder{a}, []records.RoundOrder{b}) {
				return fmt.Sprintf("round %d: %+v, this node's %+v", i, a, b)
			}
		}
	}
	return ""
}

func equalRounds(a, b []records.RoundOrder) bool {
	return slices.EqualFunc(a, b, func(x, y records.RoundOrder) bool {
		return x.Macro == y.Macro && slices.Equal(x.Commits, y.Commits) && slices.Equal(x.Disclosures, y.Disclosures) && slices.Equal(x.Lockers, y.Lockers)
	})
}

// WeighVerdicts sorts the job's verdict records with judgement j: those
// that follow from the records (agree), highest-ranked author first, and
// those refused outright (by an author that may not write one, or, when
// j is final, saying something else). load opens a record; final is
// j.Final(...). A record j cannot judge yet (j not final) is neither.
func WeighVerdicts(id jobs.ID, recs *Records, j Judgement, rounds []records.RoundOrder, final bool, load func(Authored[[]byte]) VerdictCand) (agree []VerdictCand, refused []Refusal) {
	own := VerdictFor(j, rounds)
	disclosers := recs.Disclosers()
	var eligible []Authored[[]byte]
	for _, a := range recs.Verdicts {
		switch {
		case !disclosers[a.Author]:
			refused = append(refused, Refusal{Key: a.Key, Kind: records.VerdictType, Reason: RefusedAuthor, Seq: a.Seq})
		case slices.Contains(j.Culprits, a.Author):
			refused = append(refused, Refusal{Key: a.Key, Kind: records.VerdictType, Reason: RefusedCulprit, Seq: a.Seq})
		case final:
			eligible = append(eligible, a)
		}
	}
	slices.SortFunc(eligible, func(a, b Authored[[]byte]) int {
		ra, rb := Rank(id, a.Author), Rank(id, b.Author)
		return bytes.Compare(rb[:], ra[:])
	})
	for _, a := range eligible {
		c := load(a)
		switch {
		case c.Err != nil && errors.Is(c.Err, records.ErrBadRecord) && !errors.Is(c.Err, records.ErrBodyNotFetched):
			refused = append(refused, Refusal{Key: a.Key, Kind: records.VerdictType, Reason: RefusedContent, Seq: a.Seq})
		case c.Err != nil:
			// Not readable here yet (a body no peer served): neither.
		case Mismatch(c.Rec, own) != "":
			refused = append(refused, Refusal{Key: a.Key, Kind: records.VerdictType, Reason: RefusedDisagrees, Seq: a.Seq})
		default:
			agree = append(agree, c)
		}
	}
	return agree, refused
}

// LoadCand opens a verdict record, fetching its body from blocks.
func LoadCand(ctx context.Context, a Authored[[]byte], blocks records.BodyReader) VerdictCand {
	rec, v, err := records.LoadVerdictRecord(ctx, a.Rec, blocks)
	return VerdictCand{Authored: a, Rec: rec, V: v, Err: err}
}

// Superseded returns self's own verdict record among recs when verdicts
// that follow from the records count (agree) and it is not one of them:
// it was written before a record that changed the judgement (a late
// commitment, a re-run, a redo) reached its author, and another finalizer
// wrote the verdict that follows. Its author withdraws it, so that every
// verdict left in the store agrees with the one that settles the job. A
// verdict that the job's settlement proposal binds (its result root and
// verifier hash) is kept whatever came later, since the chain may settle
// on it and a reader finds the settled verdict by those two
// (SettledVerdict); so is one that load cannot open while there is a
// proposal.
func Superseded(self string, recs *Records, agree []VerdictCand, load func(Authored[[]byte]) VerdictCand) (Authored[[]byte], bool) {
	if len(agree) == 0 {
		return Authored[[]byte]{}, false
	}
	i := slices.IndexFunc(recs.Verdicts, func(a Authored[[]byte]) bool { return a.Author == self })
	if i < 0 {
		return Authored[[]byte]{}, false
	}
	own := recs.Verdicts[i]
	if slices.ContainsFunc(agree, func(c VerdictCand) bool { return c.Key == own.Key && c.Seq == own.Seq }) {
		return Authored[[]byte]{}, false
	}
	if p := recs.Proposal; p != nil {
		c := load(own)
		if c.Err != nil {
			return Authored[[]byte]{}, false
		}
		out, err := cid.Decode(c.Rec.Output)
		if err == nil && records.ResultRoot(out) == p.ResultRoot && records.OutcomeDigest(c.V, c.Rec) == p.VerifierHash {
			return Authored[[]byte]{}, false
		}
	}
	return own, true
}
