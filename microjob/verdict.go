package microjob

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/jobs"
)

// VerdictVersion is the version of the Verdict encoding.
const VerdictVersion = 2

// MaxVerdictBytes bounds a Verdict encoding. A verdict carries every block
// hash of the job (about 130 bytes per block with its share of the
// per-MicroJob fields), so this covers jobs of about two million blocks; a
// verdict above the replicated store's payload limit is stored in IPFS and
// referenced by CID.
const MaxVerdictBytes = 256 << 20

// Verdict is the finalizer's judgement of a job's results. It is a pure
// function of the JobInfo, the plan and the records (Judge), updated by
// Resolve; every slice is sorted and every map is encoded with sorted keys,
// so the same inputs give byte-identical encodings on every node. IDs and
// hashes are lowercase hex, CIDs in their default string form.
type Verdict struct {
	Version  uint32 `json:"version"`  // VerdictVersion
	JobID    string `json:"job"`      // the job
	Complete bool   `json:"complete"` // every MicroJob has a credited result: no Missing, no Redo, no Short
	Verified bool   `json:"verified"` // Complete and no open Disputes: the results may be paid and assembled
	// CheckSeed is the seed the plan's verifiers were drawn from
	// (jobs.Plan.WithChecks), lowercase hex; "" when the plan had none.
	CheckSeed string `json:"checkSeed"`
	// VerifierHashes maps a MacroJob index to its accepted verifier
	// MicroJob's block hashes, in the verifier's block order: the proof
	// that the MacroJob's regular results were checked.
	VerifierHashes map[uint64][]string `json:"verifierHashes"`
	// Counts maps a processor to the number of MicroJobs credited to it.
	// Final only when Disputes is empty.
	Counts map[string]int `json:"counts"`
	// ResultCIDs maps a MicroJob ID to its accepted result directory.
	ResultCIDs  map[string]string `json:"resultCIDs"`
	Disputes    []Dispute         `json:"disputes"`    // open disagreements, one per block and pair of results
	Culprits    []string          `json:"culprits"`    // processors found wrong by Resolve
	Missing     []string          `json:"missing"`     // MicroJobs without a valid disclosure
	Redo        []string          `json:"redo"`        // MicroJobs whose every result came from a culprit
	Invalid     []Invalid         `json:"invalid"`     // disclosures that did not count, with reasons
	Resolutions []Resolution      `json:"resolutions"` // the re-run votes Resolve applied, in order
	Results     []Result          `json:"results"`     // every valid disclosure, by MacroJob, slot, processor
	// Undecided are the disputes whose re-runs gave no decisive margin
	// (Undecide): nobody is culprit for them and the job is not Verified.
	Undecided []Undecided `json:"undecided,omitempty"`
	// Replicas is the job's R when above 1 (replicated validation), else
	// 0 and absent from the encoding.
	Replicas uint32 `json:"replicas,omitempty"`
	// Committed maps, for R > 1, each MicroJob with a result to the number
	// of distinct processors with a valid commitment to it.
	Committed map[string]int `json:"committed,omitempty"`
	// Short lists, for R > 1, the MicroJobs with a result that are not
	// decided yet: fewer than R committers, or fewer than a majority
	// (⌊R/2⌋+1) of credited results.
	Short []string `json:"short,omitempty"`
}

// Result is one valid disclosure as the verdict keeps it.
type Result struct {
	Macro     uint64   `json:"macro"`     // MacroJob index
	Slot      int      `json:"slot"`      // MicroJob slot in the MacroJob
	MicroID   string   `json:"micro"`     // MicroJob ID
	Verifier  bool     `json:"verifier"`  // the MicroJob is the MacroJob's verifier
	Processor string   `json:"processor"` // who disclosed it
	Wallet    string   `json:"wallet"`    // where its pay goes
	ResultCID string   `json:"result"`    // its result directory
	Hashes    []string `json:"hashes"`    // block output hashes in the MicroJob's block order
}

// Dispute is a block whose output hash differs between two results: a
// regular MicroJob and the verifier (Micros differ), or two processors'
// results of one MicroJob (Micros equal).
type Dispute struct {
	Macro      uint64    `json:"macro"`      // MacroJob index
	Block      uint64    `json:"block"`      // global block index
	Micros     [2]string `json:"micros"`     // MicroJob of each side
	Processors [2]string `json:"processors"` // processor of each side
	Hashes     [2]string `json:"hashes"`     // output hash of the block on each side
}

// Invalid is a disclosure that did not count.
type Invalid struct {
	MicroID   string `json:"micro"`
	Processor string `json:"processor"`
	Reason    string `json:"reason"`
}

// Vote is one re-runner's output hash of a disputed block.
type Vote struct {
	Processor string `json:"processor"` // the re-runner
	Hash      string `json:"hash"`      // its output hash of the block
}

// Resolution records one Resolve step.
type Resolution struct {
	Dispute  Dispute  `json:"dispute"`
	Votes    []Vote   `json:"votes"`    // the re-runners' hashes, by re-runner
	Winner   string   `json:"winner"`   // the hash that won
	Culprits []string `json:"culprits"` // the side(s) whose hash lost
}

// Undecided is a dispute whose re-runs gave no hash a decisive lead.
type Undecided struct {
	Dispute Dispute `json:"dispute"`
	Votes   []Vote  `json:"votes"`  // the re-runners' hashes, by re-runner
	Reason  string  `json:"reason"` // why no more re-runs decide it
}

// derive recomputes everything that follows from Results, Culprits,
// Missing and Disputes, and sorts every list.
func (v *Verdict) derive() {
	culprit := map[string]bool{}
	for _, c := range v.Culprits {
		culprit[c] = true
	}
	slices.SortFunc(v.Results, func(a, b Result) int {
		return cmp.Or(cmp.Compare(a.Macro, b.Macro), cmp.Compare(a.Slot, b.Slot), cmp.Compare(a.Processor, b.Processor))
	})
	v.VerifierHashes = map[uint64][]string{}
	v.Counts = map[string]int{}
	v.ResultCIDs = map[string]string{}
	v.Redo = v.Redo[:0]
	v.Short = nil
	quorum := int(v.Replicas/2) + 1
	for i := 0; i < len(v.Results); {
		j := i
		accepted, credited, fromCulprit := -1, 0, false
		for ; j < len(v.Results) && v.Results[j].MicroID == v.Results[i].MicroID; j++ {
			r := v.Results[j]
			if culprit[r.Processor] {
				fromCulprit = true
				continue
			}
			v.Counts[r.Processor]++
			credited++
			if accepted < 0 {
				accepted = j
			}
		}
		micro := v.Results[i].MicroID
		switch {
		case v.Replicas > 1 && accepted >= 0 && credited < quorum && fromCulprit:
			// The culprits' results are gone and too few remain: the
			// MicroJob needs other hands.
			v.Redo = append(v.Redo, micro)
		case v.Replicas > 1 && accepted >= 0 && (credited < quorum || v.Committed[micro] < int(v.Replicas)):
			v.Short = append(v.Short, micro)
		}
		if accepted < 0 {
			v.Redo = append(v.Redo, micro) // Results are in MacroJob, slot order
		} else {
			r := v.Results[accepted]
			v.ResultCIDs[r.MicroID] = r.ResultCID
			if r.Verifier {
				v.VerifierHashes[r.Macro] = slices.Clone(r.Hashes)
			}
		}
		i = j
	}
	slices.SortFunc(v.Disputes, compareDisputes)
	v.Disputes = slices.Compact(v.Disputes)
	slices.SortFunc(v.Undecided, func(a, b Undecided) int { return compareDisputes(a.Dispute, b.Dispute) })
	slices.Sort(v.Culprits)
	v.Culprits = slices.Compact(v.Culprits)
	slices.SortFunc(v.Invalid, func(a, b Invalid) int {
		return cmp.Or(cmp.Compare(a.MicroID, b.MicroID), cmp.Compare(a.Processor, b.Processor), cmp.Compare(a.Reason, b.Reason))
	})
	v.normalize()
	v.Complete = len(v.Missing) == 0 && len(v.Redo) == 0 && len(v.Short) == 0
	v.Verified = v.Complete && len(v.Disputes) == 0 && len(v.Undecided) == 0
}

func compareDisputes(a, b Dispute) int {
	return cmp.Or(cmp.Compare(a.Macro, b.Macro), cmp.Compare(a.Block, b.Block),
		cmp.Compare(a.Micros[0], b.Micros[0]), cmp.Compare(a.Micros[1], b.Micros[1]),
		cmp.Compare(a.Processors[0], b.Processors[0]), cmp.Compare(a.Processors[1], b.Processors[1]),
		cmp.Compare(a.Hashes[0], b.Hashes[0]), cmp.Compare(a.Hashes[1], b.Hashes[1]))
}

// normalize turns nil lists and maps into empty ones, so that a verdict
// has one encoding however it was built.
func (v *Verdict) normalize() {
	if v.VerifierHashes == nil {
		v.VerifierHashes = map[uint64][]string{}
	}
	if v.Counts == nil {
		v.Counts = map[string]int{}
	}
	if v.ResultCIDs == nil {
		v.ResultCIDs = map[string]string{}
	}
	nonNil(&v.Disputes)
	nonNil(&v.Culprits)
	nonNil(&v.Missing)
	nonNil(&v.Redo)
	nonNil(&v.Invalid)
	nonNil(&v.Resolutions)
	nonNil(&v.Results)
	for i := range v.Resolutions {
		nonNil(&v.Resolutions[i].Culprits)
		nonNil(&v.Resolutions[i].Votes)
	}
	if len(v.Undecided) == 0 {
		v.Undecided = nil
	}
	for i := range v.Undecided {
		nonNil(&v.Undecided[i].Votes)
	}
	for i := range v.Results {
		nonNil(&v.Results[i].Hashes)
	}
}

func nonNil[T any](s *[]T) {
	if *s == nil {
		*s = []T{}
	}
}

// Resolve settles dispute d with the hash that won its vote (the
// escalation rule, package finish, says which): the processor of each side
// whose hash is not winner becomes a culprit, both when winner matches
// neither side (nothing can be trusted about the block; a code that is not
// deterministic ends here too). votes are the re-runners' hashes of the
// block, kept in the resolution sorted by re-runner; a re-runner that voted
// for a losing hash is listed there but is no culprit.
//
// A culprit is credited for nothing, every dispute it is a side of closes
// (its MicroJobs are re-run and judged again), and each of its MicroJobs
// without another processor's result is listed in Redo. A culprit verifier
// puts the verifier MicroJob in Redo too, so that the MacroJob keeps a proof
// from an honest verifier. v is not modified.
func Resolve(v Verdict, d Dispute, votes []Vote, winner string) (Verdict, error) {
	votes, err := checkVotes(v, d, votes)
	if err != nil {
		return Verdict{}, err
	}
	if _, err := parseHash("winner", winner); err != nil {
		return Verdict{}, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	var lost []string
	for i, h := range d.Hashes {
		if h != winner {
			lost = append(lost, d.Processors[i])
		}
	}
	lost = slices.Compact(lost)
	out := v.clone()
	out.Culprits = append(out.Culprits, lost...)
	out.Resolutions = append(out.Resolutions, Resolution{Dispute: d, Votes: votes, Winner: winner, Culprits: lost})
	out.close()
	return out, nil
}

// Undecide moves dispute d, whose votes gave no hash a decisive lead, from
// Disputes to Undecided, with the reason: nobody becomes a culprit for it
// and the verdict is not Verified. v is not modified.
func Undecide(v Verdict, d Dispute, votes []Vote, reason string) (Verdict, error) {
	votes, err := checkVotes(v, d, votes)
	if err != nil {
		return Verdict{}, err
	}
	out := v.clone()
	out.Undecided = append(out.Undecided, Undecided{Dispute: d, Votes: votes, Reason: reason})
	out.Disputes = slices.DeleteFunc(out.Disputes, func(x Dispute) bool { return x == d })
	out.close()
	return out, nil
}

// checkVotes checks that d is an open dispute of v and votes are hashes
// of distinct re-runners that are neither side, and returns them sorted
// by re-runner.
func checkVotes(v Verdict, d Dispute, votes []Vote) ([]Vote, error) {
	if !slices.Contains(v.Disputes, d) {
		return nil, fmt.Errorf("%w: block %d between %s and %s", ErrUnknownDispute, d.Block, d.Processors[0], d.Processors[1])
	}
	votes = slices.Clone(votes)
	slices.SortFunc(votes, func(a, b Vote) int { return cmp.Compare(a.Processor, b.Processor) })
	for i, x := range votes {
		if x.Processor == "" || x.Processor == d.Processors[0] || x.Processor == d.Processors[1] {
			return nil, fmt.Errorf("%w: re-runner %q must differ from both sides", ErrInvalidInput, x.Processor)
		}
		if i > 0 && votes[i-1].Processor == x.Processor {
			return nil, fmt.Errorf("%w: two votes of re-runner %s", ErrInvalidInput, x.Processor)
		}
		if _, err := parseHash("vote", x.Hash); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidInput, err)
		}
	}
	nonNil(&votes)
	return votes, nil
}

// clone returns a copy of v whose lists Resolve and Undecide may change.
func (v Verdict) clone() Verdict {
	out := v
	out.Culprits = slices.Clone(v.Culprits)
	out.Resolutions = slices.Clone(v.Resolutions)
	out.Undecided = slices.Clone(v.Undecided)
	out.Disputes = slices.Clone(v.Disputes)
	out.Results = slices.Clone(v.Results)
	out.Missing = slices.Clone(v.Missing)
	out.Invalid = slices.Clone(v.Invalid)
	out.Redo = nil
	return out
}

// close drops the open and undecided disputes a culprit is a side of, and
// derives the rest.
func (v *Verdict) close() {
	isCulprit := map[string]bool{}
	for _, c := range v.Culprits {
		isCulprit[c] = true
	}
	sided := func(x Dispute) bool { return isCulprit[x.Processors[0]] || isCulprit[x.Processors[1]] }
	v.Disputes = slices.DeleteFunc(v.Disputes, sided)
	v.Undecided = slices.DeleteFunc(v.Undecided, func(u Undecided) bool { return sided(u.Dispute) })
	v.derive()
}

// Encode returns the canonical encoding of v: JSON with the field order
// of the struct, no whitespace, map keys sorted, lists sorted by derive.
func (v Verdict) Encode() []byte {
	v.normalize()
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // strings, numbers and booleans always marshal
	}
	return b
}

// DecodeVerdict parses and checks a canonical Verdict encoding of at most
// MaxVerdictBytes.
func DecodeVerdict(b []byte) (Verdict, error) {
	var v Verdict
	if err := strictJSON(b, MaxVerdictBytes, &v); err != nil {
		return Verdict{}, err
	}
	if v.Version != VerdictVersion {
		return Verdict{}, fmt.Errorf("%w: verdict version %d", ErrVersion, v.Version)
	}
	if err := v.check(); err != nil {
		return Verdict{}, err
	}
	if !bytes.Equal(v.Encode(), b) {
		return Verdict{}, fmt.Errorf("%w: verdict", ErrNonCanonical)
	}
	v.normalize()
	return v, nil
}

// check validates the fields a reader relies on.
func (v *Verdict) check() error {
	if _, err := parseHash("job", v.JobID); err != nil {
		return err
	}
	if v.CheckSeed != "" {
		if _, err := parseHash("check seed", v.CheckSeed); err != nil {
			return err
		}
	}
	for _, r := range v.Results {
		if _, err := parseHash("micro", r.MicroID); err != nil {
			return err
		}
		if _, err := cid.Decode(r.ResultCID); err != nil {
			return fmt.Errorf("%w: result CID %q: %v", ErrMalformed, r.ResultCID, err)
		}
		for _, h := range r.Hashes {
			if _, err := parseHash("hash", h); err != nil {
				return err
			}
		}
	}
	if v.Replicas == 1 || v.Replicas > jobs.MaxReplicas {
		return fmt.Errorf("%w: verdict replicas %d (0 or 2..%d)", ErrMalformed, v.Replicas, jobs.MaxReplicas)
	}
	for m := range v.Committed {
		if _, err := parseHash("micro", m); err != nil {
			return err
		}
	}
	for _, m := range v.Short {
		if _, err := parseHash("micro", m); err != nil {
			return err
		}
	}
	for m, c := range v.ResultCIDs {
		if _, err := parseHash("micro", m); err != nil {
			return err
		}
		if _, err := cid.Decode(c); err != nil {
			return fmt.Errorf("%w: result CID %q: %v", ErrMalformed, c, err)
		}
	}
	return nil
}
