package finish

import (
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

// DisclosureFilter says whether a disclosure of job info counts in
// judging it.
type DisclosureFilter func(ctx context.Context, info *jobs.JobInfo, d microjob.Disclosure) (bool, error)

// CandidateFunc lists the processors a reader holds eligible to re-run
// a block of job info (Records.Candidates), given the advertised
// processors procs.
type CandidateFunc func(ctx context.Context, info *jobs.JobInfo, procs []string) ([]Candidate, error)

// Rules are how a reader judges a job's records beyond what they say
// themselves. A reader of a mesh with a chain judges by its processors'
// rules (membership.ReaderRules), or it may find no verdict that follows
// from the records where they left a disclosure out or let a self-checked
// block stand. The zero Rules judge every disclosure and rank the
// advertised processors by peer ID.
type Rules struct {
	// Keep says which disclosures count; nil: every disclosure.
	Keep DisclosureFilter
	// Candidates lists the re-run candidates; nil: the advertised
	// processors by peer ID, and no request's order is checked.
	Candidates CandidateFunc
}

// ErrNoVerdict: no verdict record of the job follows from the records.
var ErrNoVerdict = errors.New("finish: no verdict that follows from the records")

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
	// Rules are the reader's judging rules.
	Rules Rules
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
		return ChosenVerdict{}, fmt.Errorf("finish: choosing a verdict: no JobInfo")
	}
	id := q.Info.ID()
	plan, err := jobs.Slice(q.Info)
	if err != nil {
		return ChosenVerdict{}, err
	}
	recs := NewRecords()
	kept := map[[2]string]bool{} // by processor and wallet
	for _, r := range q.Records {
		if r.Tombstone {
			continue
		}
		p := OpenPart(id, r)
		if d := p.Discl; d != nil && q.Rules.Keep != nil {
			k := [2]string{d.Processor, d.Wallet}
			ok, seen := kept[k]
			if !seen {
				if ok, err = q.Rules.Keep(ctx, q.Info, *d); err != nil {
					return ChosenVerdict{}, fmt.Errorf("finish: judging job %s: %w", id, err)
				}
				kept[k] = ok
			}
			if !ok {
				continue
			}
		}
		recs.Add(id, p)
	}
	if len(recs.Verdicts) == 0 || len(recs.Discl) == 0 {
		return ChosenVerdict{}, fmt.Errorf("%w: job %s", ErrNoVerdict, id)
	}
	if q.Rules.Candidates != nil {
		if recs.Candidates, err = q.Rules.Candidates(ctx, q.Info, q.Processors); err != nil {
			return ChosenVerdict{}, fmt.Errorf("finish: judging job %s: %w", id, err)
		}
	}
	// A reader that finds verdicts judges with the revealed seed if there
	// is one, else the lapse seed: a verdict follows only from one of them.
	plan, err = CheckedPlan(plan, ChooseChecks(q.Info, plan, recs, ProgressOf(recs, int(q.Info.Requirements.Replicas)), 0, 0))
	if err != nil {
		return ChosenVerdict{}, fmt.Errorf("%w: job %s: %w", ErrNoVerdict, id, err)
	}
	j, err := Judge(q.Info, plan, recs)
	if err != nil {
		return ChosenVerdict{}, err
	}
	var loadErr error
	agree, _ := WeighVerdicts(id, recs, j, FinalRounds(plan, recs), j.Final(plan, q.Processors), func(a Authored[[]byte]) VerdictCand {
		c := LoadCand(ctx, a, q.Blocks)
		if c.Err != nil && loadErr == nil && (errors.Is(c.Err, records.ErrBodyNotFetched) || errors.Is(c.Err, records.ErrBodyUnavailable)) {
			loadErr = c.Err
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
			if out, err := cid.Decode(c.Rec.Output); err == nil && records.ResultRoot(out) == *q.ResultRoot {
				best = c
				break
			}
		}
	}
	return ChosenVerdict{Author: best.Author, Seq: best.Seq, Record: best.Rec, Verdict: best.V}, nil
}

// SettledVerdict returns the verdict record of job id that its
// settlement released the escrow on: its output's ResultRoot is root and
// its OutcomeDigest is verifierHash. The chain binds that content, so the
// record may be any author's and need not follow from this reader's
// records, which may not hold every record the settlers judged by yet.
// While no such record is here it returns an error wrapping ErrNoVerdict.
func SettledVerdict(ctx context.Context, store RecordReader, blocks records.BodyReader, id jobs.ID, root, verifierHash common.Hash) (ChosenVerdict, error) {
	vs, err := store.Query(ctx, records.VerdictPrefix(id))
	if err != nil {
		return ChosenVerdict{}, err
	}
	for _, r := range vs {
		if r.Tombstone || r.Type != records.VerdictType {
			continue
		}
		rec, v, err := records.LoadVerdictRecord(ctx, r.Payload, blocks)
		if err != nil {
			continue
		}
		out, err := cid.Decode(rec.Output)
		if err != nil || records.ResultRoot(out) != root || records.OutcomeDigest(v, rec) != verifierHash {
			continue
		}
		return ChosenVerdict{Author: r.AuthorText(), Seq: r.Seq, Record: rec, Verdict: v}, nil
	}
	return ChosenVerdict{}, fmt.Errorf("%w: job %s: none settled on result root %s, verifier hash %s", ErrNoVerdict, id, root, verifierHash)
}

// ReadVerdict reads the verdict that counts for job id from store:
// ChooseVerdict over the job's JobInfo and records and the advertised
// processors, with blocks and root as in VerdictQuery. Without a verdict
// record it returns ErrNoVerdict at the cost of one small query.
func ReadVerdict(ctx context.Context, store RecordReader, blocks records.BodyReader, id jobs.ID, root *common.Hash) (ChosenVerdict, error) {
	return ReadVerdictBy(ctx, store, blocks, id, root, Rules{})
}

// ReadVerdictBy is ReadVerdict judging by rules (VerdictQuery.Rules).
func ReadVerdictBy(ctx context.Context, store RecordReader, blocks records.BodyReader, id jobs.ID, root *common.Hash, rules Rules) (ChosenVerdict, error) {
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
		return ChosenVerdict{}, fmt.Errorf("finish: reading job %s: %w", id, err)
	}
	info, err := jobs.Decode(jr.Payload)
	if err != nil {
		return ChosenVerdict{}, fmt.Errorf("finish: job %s: %w", id, err)
	}
	if info.ID() != id {
		return ChosenVerdict{}, fmt.Errorf("finish: the record of job %s holds job %s", id, info.ID())
	}
	recs, err := store.Query(ctx, records.JobKey(id)+"/")
	if err != nil {
		return ChosenVerdict{}, err
	}
	procs, err := Processors(ctx, store)
	if err != nil {
		return ChosenVerdict{}, err
	}
	return ChooseVerdict(ctx, VerdictQuery{Info: info, Records: recs, Processors: procs, Blocks: blocks, ResultRoot: root, Rules: rules})
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
		if r.Type == records.AdvertType && !r.Tombstone && strings.HasSuffix(r.Key, "/"+r.AuthorText()) {
			out = append(out, r.AuthorText())
		}
	}
	slices.Sort(out)
	return out, nil
}
