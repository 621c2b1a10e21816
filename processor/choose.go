package processor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// A verdict counts only when its author may write it (a finalizer of the
// job: finalizerOrder) and it follows from the reader's own records: the
// reader judges the job itself, finds it verified with every check it
// waits for settled (checksSettled), and the record holds exactly that
// verdict, those culprits and those rounds. Among the verdicts that
// count, the highest-ranked author's is reported, or, once the job is
// settled on chain, the one whose output the settlement names. The
// output CID is checked where the output is assembled: by the designated
// finalizer before it lets another's verdict stand, and by every signer
// (audit.go).

// ErrNoVerdict: no verdict record of the job follows from the records.
var ErrNoVerdict = errors.New("processor: no verdict that follows from the records")

// Why a signer or a reader refuses a verdict record (the reason label of
// jobmesh_processor_sign_refusals_total, and what verdictMismatch says).
const (
	mismatchVerdict  = "verdict"  // its verdict is not the reader's
	mismatchCulprits = "culprits" // its culprits are not the reader's
	mismatchRounds   = "rounds"   // its submission rounds are not the reader's
	mismatchOutput   = "output"   // its output is not the reader's assembly
	mismatchNone     = "missing"  // no eligible verdict record at all
	mismatchPending  = "pending"  // the reader's own judgement is not final
	mismatchBadBody  = "unreadable"
)

// verdictCand is one stored verdict record, loaded.
type verdictCand struct {
	authored[[]byte]
	rec records.VerdictRecord
	v   microjob.Verdict
	err error // loading failed
}

// verdictFor is the record a reader with judgement j and rounds would
// write, without its output.
func verdictFor(j judgement, rounds []records.RoundOrder) records.VerdictRecord {
	return records.VerdictRecord{Verdict: j.v.Encode(), Culprits: j.culprits, Rounds: rounds}
}

// verdictMismatch says what differs between a stored record and own, the
// record the reader would write ("" when nothing but the output, which it
// does not compare, differs).
func verdictMismatch(stored, own records.VerdictRecord) string {
	switch {
	case !bytes.Equal(stored.Verdict, own.Verdict):
		return mismatchVerdict
	case !slices.Equal(stored.Culprits, own.Culprits):
		return mismatchCulprits
	case !equalRounds(stored.Rounds, own.Rounds):
		return mismatchRounds
	}
	return ""
}

func equalRounds(a, b []records.RoundOrder) bool {
	return slices.EqualFunc(a, b, func(x, y records.RoundOrder) bool {
		return x.Macro == y.Macro && slices.Equal(x.Commits, y.Commits) && slices.Equal(x.Disclosures, y.Disclosures)
	})
}

// final reports whether judgement j is one a verdict may follow from:
// verified, and every check it waits for settled, as the finalizer
// requires before it writes (procs: the advertised processors).
func (j judgement) final(plan *jobs.Plan, procs []string) bool {
	return j.v.Verified && checksSettled(plan, j.v, j.recs, procs)
}

// weighVerdicts sorts the job's verdict records with judgement j: those
// that follow from the records (agree), highest-ranked author first, and
// those refused outright (by an author that may not write one, or, when
// j is final, saying something else). load opens a record; final is
// j.final(...). A record j cannot judge yet (j not final) is neither.
func weighVerdicts(id jobs.ID, recs *jobRecords, j judgement, rounds []records.RoundOrder, final bool, load func(authored[[]byte]) verdictCand) (agree []verdictCand, refused []refusal) {
	own := verdictFor(j, rounds)
	disclosers := recs.disclosers()
	var eligible []authored[[]byte]
	for _, a := range recs.verdicts {
		switch {
		case !disclosers[a.author]:
			refused = append(refused, refusal{key: a.key, kind: records.VerdictType, reason: refusedAuthor, seq: a.seq})
		case slices.Contains(j.culprits, a.author):
			refused = append(refused, refusal{key: a.key, kind: records.VerdictType, reason: refusedCulprit, seq: a.seq})
		case final:
			eligible = append(eligible, a)
		}
	}
	slices.SortFunc(eligible, func(a, b authored[[]byte]) int {
		ra, rb := finalizerRank(id, a.author), finalizerRank(id, b.author)
		return bytes.Compare(rb[:], ra[:])
	})
	for _, a := range eligible {
		c := load(a)
		switch {
		case c.err != nil && errors.Is(c.err, records.ErrBadRecord) && !errors.Is(c.err, records.ErrBodyNotFetched):
			refused = append(refused, refusal{key: a.key, kind: records.VerdictType, reason: refusedContent, seq: a.seq})
		case c.err != nil:
			// Not readable here yet (a body no peer served): neither.
		case verdictMismatch(c.rec, own) != "":
			refused = append(refused, refusal{key: a.key, kind: records.VerdictType, reason: refusedDisagrees, seq: a.seq})
		default:
			agree = append(agree, c)
		}
	}
	return agree, refused
}

// loadCand opens a verdict record, fetching its body from blocks.
func loadCand(ctx context.Context, a authored[[]byte], blocks records.BodyReader) verdictCand {
	rec, v, err := records.LoadVerdictRecord(ctx, a.rec, blocks)
	return verdictCand{authored: a, rec: rec, v: v, err: err}
}

// VerdictQuery is what ChooseVerdict reads.
type VerdictQuery struct {
	// Info is the job.
	Info *jobs.JobInfo
	// Records are the job's records: Store.Query(records.JobKey(id) + "/").
	Records []crdt.Record
	// Processors are the advertised processors (Processors): whether a
	// self-checked block could be checked depends on how many there are.
	Processors []string
	// Blocks reads verdict bodies; nil: a body record is not read.
	Blocks records.BodyReader
	// ResultRoot, when set, is the resultRoot the job was settled with:
	// a verdict whose output it names is preferred.
	ResultRoot *common.Hash
	// Keep, when set, says which disclosures count in judging: a reader
	// of a mesh with a chain passes KeepMembers, the rule its processors
	// judge by. Nil: every disclosure.
	Keep DisclosureFilter
}

// ChosenVerdict is the verdict ChooseVerdict reports.
type ChosenVerdict struct {
	Author  string // its writer's peer ID
	Seq     uint64 // its record's seq
	Record  records.VerdictRecord
	Verdict microjob.Verdict
}

// ChooseVerdict returns the verdict that counts for a job: of the verdict
// records that follow from the records (see above), the one whose output
// q.ResultRoot names, else the highest-ranked author's. Without one it
// returns an error wrapping ErrNoVerdict, or the error that kept an
// eligible record from being read (ErrBodyNotFetched, ErrBodyUnavailable).
func ChooseVerdict(ctx context.Context, q VerdictQuery) (ChosenVerdict, error) {
	if q.Info == nil {
		return ChosenVerdict{}, fmt.Errorf("processor: choosing a verdict: no JobInfo")
	}
	id := q.Info.ID()
	plan, err := jobs.Slice(q.Info)
	if err != nil {
		return ChosenVerdict{}, err
	}
	recs := newJobRecords()
	kept := map[[2]string]bool{} // by processor and wallet
	for _, r := range q.Records {
		if r.Tombstone {
			continue
		}
		p := openPart(id, r)
		if d := p.discl; d != nil && q.Keep != nil {
			k := [2]string{d.Processor, d.Wallet}
			ok, seen := kept[k]
			if !seen {
				if ok, err = q.Keep(ctx, q.Info, *d); err != nil {
					return ChosenVerdict{}, fmt.Errorf("processor: judging job %s: %w", id, err)
				}
				kept[k] = ok
			}
			if !ok {
				continue
			}
		}
		recs.add(id, p)
	}
	if len(recs.verdicts) == 0 || len(recs.discl) == 0 {
		return ChosenVerdict{}, fmt.Errorf("%w: job %s", ErrNoVerdict, id)
	}
	j, err := judgeRecords(q.Info, plan, recs)
	if err != nil {
		return ChosenVerdict{}, err
	}
	var loadErr error
	agree, _ := weighVerdicts(id, recs, j, finalRounds(plan, recs), j.final(plan, q.Processors), func(a authored[[]byte]) verdictCand {
		c := loadCand(ctx, a, q.Blocks)
		if c.err != nil && loadErr == nil && (errors.Is(c.err, records.ErrBodyNotFetched) || errors.Is(c.err, records.ErrBodyUnavailable)) {
			loadErr = c.err
		}
		return c
	})
	if len(agree) == 0 {
		if loadErr != nil {
			return ChosenVerdict{}, loadErr
		}
		return ChosenVerdict{}, fmt.Errorf("%w: job %s", ErrNoVerdict, id)
	}
	best := agree[0]
	if q.ResultRoot != nil {
		for _, c := range agree {
			if out, err := cid.Decode(c.rec.Output); err == nil && records.ResultRoot(out) == *q.ResultRoot {
				best = c
				break
			}
		}
	}
	return ChosenVerdict{Author: best.author, Seq: best.seq, Record: best.rec, Verdict: best.v}, nil
}

// ReadVerdict reads the verdict that counts for job id from store:
// ChooseVerdict over the job's JobInfo and records and the advertised
// processors, with blocks and root as in VerdictQuery. Without a verdict
// record it returns ErrNoVerdict at the cost of one small query.
func ReadVerdict(ctx context.Context, store RecordReader, blocks records.BodyReader, id jobs.ID, root *common.Hash) (ChosenVerdict, error) {
	return ReadVerdictKeeping(ctx, store, blocks, id, root, nil)
}

// ReadVerdictKeeping is ReadVerdict judging only the disclosures keep
// accepts (VerdictQuery.Keep).
func ReadVerdictKeeping(ctx context.Context, store RecordReader, blocks records.BodyReader, id jobs.ID, root *common.Hash, keep DisclosureFilter) (ChosenVerdict, error) {
	vs, err := store.Query(ctx, records.VerdictPrefix(id))
	if err != nil {
		return ChosenVerdict{}, err
	}
	if !slices.ContainsFunc(vs, func(r crdt.Record) bool { return !r.Tombstone }) {
		return ChosenVerdict{}, fmt.Errorf("%w: job %s", ErrNoVerdict, id)
	}
	jr, err := store.Get(ctx, records.JobKey(id))
	if errors.Is(err, crdt.ErrNotFound) {
		return ChosenVerdict{}, fmt.Errorf("%w: job %s is not in the store", ErrNoVerdict, id)
	}
	if err != nil {
		return ChosenVerdict{}, fmt.Errorf("processor: reading job %s: %w", id, err)
	}
	info, err := jobs.Decode(jr.Payload)
	if err != nil {
		return ChosenVerdict{}, fmt.Errorf("processor: job %s: %w", id, err)
	}
	if info.ID() != id {
		return ChosenVerdict{}, fmt.Errorf("processor: the record of job %s holds job %s", id, info.ID())
	}
	recs, err := store.Query(ctx, records.JobKey(id)+"/")
	if err != nil {
		return ChosenVerdict{}, err
	}
	procs, err := Processors(ctx, store)
	if err != nil {
		return ChosenVerdict{}, err
	}
	return ChooseVerdict(ctx, VerdictQuery{Info: info, Records: recs, Processors: procs, Blocks: blocks, ResultRoot: root, Keep: keep})
}

// Processors lists the advertised processors' peer IDs in store, sorted:
// the authors of the node records under /nodes/<their peer ID>.
func Processors(ctx context.Context, store RecordReader) ([]string, error) {
	recs, err := store.Query(ctx, records.NodesPrefix)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range recs {
		if r.Type == records.AdvertType && !r.Tombstone && strings.HasSuffix(r.Key, "/"+r.Author.String()) {
			out = append(out, r.Author.String())
		}
	}
	slices.Sort(out)
	return out, nil
}
