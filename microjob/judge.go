package microjob

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/jobmesh/jobmesh/jobs"
)

type resultKey struct {
	micro     jobs.ID
	processor string
}

type microEntry struct {
	mu      *jobs.MicroJob
	results []*Disclosure // valid disclosures, by processor
}

// Judge turns the result records of a job into a Verdict.
//
// A disclosure counts only if it is for this job, names a MicroJob of the
// plan with the plan's MacroJob index and block indices, and matches the
// commitment its processor made for that MicroJob; a processor with two
// different commitments for one MicroJob has equivocated and its
// disclosure does not count. Everything else is listed in Invalid.
//
// Several processors may have results for one MicroJob (a lock expired and
// another took it): all of them are credited when they agree; where they
// differ, each difference is a Dispute. For each MacroJob, each block of the
// verifier MicroJob is compared with the same block in its regular
// MicroJob (jobs.Plan.Counterpart); a difference is a Dispute between the
// regular side (index 0) and the verifier side (index 1).
//
// With replicated validation (info.Requirements.Replicas R > 1) each
// MicroJob is run by R processors. Its results are grouped by their block
// hashes: when they differ and one group holds a majority q = ⌊R/2⌋+1 of
// them, the processors outside it are culprits (no Dispute); without such
// a majority every differing pair is a Dispute, as for R = 1. A MicroJob
// is decided only when R distinct processors committed to it and at least
// q of its results are credited (not from a culprit); until then it is
// listed in Short and the verdict is not Complete. A culprit's commitment
// still counts toward R: the wiring may pass the commitments of processors
// it leaves out for being culprits, without their disclosures.
//
// Judge has no view of time: the wiring passes the commitments it observed
// before the MacroJob's disclosure round opened, and leaves out the records
// of processors an earlier verdict found to be culprits.
func Judge(info *jobs.JobInfo, plan *jobs.Plan, commits []Commitment, discl []Disclosure) (Verdict, error) {
	if info == nil || plan == nil {
		return Verdict{}, fmt.Errorf("%w: JobInfo and plan are required", ErrPlan)
	}
	if id := info.ID(); id != plan.JobID {
		return Verdict{}, fmt.Errorf("%w: plan of job %s, JobInfo is job %s", ErrPlan, plan.JobID, id)
	}
	j := newJudging(plan, commits)
	if plan.Checked() {
		j.v.CheckSeed = plan.CheckSeed.String()
	}
	if r := info.Requirements.Replicas; r > 1 {
		j.v.Replicas = r
		j.v.Committed = map[string]int{}
	}
	for _, d := range j.sortDisclosures(discl) {
		j.admit(d)
	}
	for m := range plan.Macros {
		mac := &plan.Macros[m]
		for s := range mac.Micros {
			j.judgeMicroJob(&mac.Micros[s])
		}
		if err := j.judgeVerifier(mac); err != nil {
			return Verdict{}, err
		}
	}
	j.v.derive()
	return j.v, nil
}

// judging is the state of one Judge call.
type judging struct {
	plan  *jobs.Plan
	jobID jobs.ID
	v     Verdict

	// Commitments by MicroJob and processor; two different values from one
	// processor is equivocation.
	committed   map[resultKey]Commitment
	equivocated map[resultKey]bool
	committers  map[jobs.ID]int // distinct committers per MicroJob, for R > 1

	enc     map[*Disclosure][]byte // each disclosure's encoding
	valid   map[resultKey]*Disclosure
	entries map[jobs.ID]*microEntry
}

func newJudging(plan *jobs.Plan, commits []Commitment) *judging {
	j := &judging{
		plan:        plan,
		jobID:       plan.JobID,
		v:           Verdict{Version: VerdictVersion, JobID: plan.JobID.String()},
		committed:   map[resultKey]Commitment{},
		equivocated: map[resultKey]bool{},
		committers:  map[jobs.ID]int{},
		valid:       map[resultKey]*Disclosure{},
		entries:     map[jobs.ID]*microEntry{},
	}
	for _, c := range commits {
		if c.JobID != j.jobID {
			continue
		}
		k := resultKey{c.MicroID, c.Processor}
		if prev, ok := j.committed[k]; ok && prev != c {
			j.equivocated[k] = true
		}
		j.committed[k] = c
	}
	for k := range j.committed {
		if !j.equivocated[k] {
			j.committers[k.micro]++
		}
	}
	return j
}

// sortDisclosures returns the disclosures in a fixed order, so "the first"
// is the same everywhere.
func (j *judging) sortDisclosures(discl []Disclosure) []*Disclosure {
	sorted := slices.Clone(discl)
	j.enc = make(map[*Disclosure][]byte, len(sorted))
	ptrs := make([]*Disclosure, len(sorted))
	for i := range sorted {
		ptrs[i] = &sorted[i]
		j.enc[ptrs[i]] = sorted[i].Encode()
	}
	slices.SortFunc(ptrs, func(a, b *Disclosure) int {
		return cmp.Or(bytes.Compare(a.MicroID[:], b.MicroID[:]), cmp.Compare(a.Processor, b.Processor), bytes.Compare(j.enc[a], j.enc[b]))
	})
	return ptrs
}

// admit credits disclosure d to its MicroJob, or lists it in Invalid.
// Disclosures come in sortDisclosures' order.
func (j *judging) admit(d *Disclosure) {
	invalid := func(format string, args ...any) {
		j.v.Invalid = append(j.v.Invalid, Invalid{MicroID: d.MicroID.String(), Processor: d.Processor, Reason: fmt.Sprintf(format, args...)})
	}
	k := resultKey{d.MicroID, d.Processor}
	mu, reason := j.checkAgainstPlan(d)
	switch {
	case reason != "":
		invalid("%s", reason)
		return
	case j.valid[k] != nil:
		if !bytes.Equal(j.enc[j.valid[k]], j.enc[d]) {
			invalid("a second, different disclosure by the same processor")
		}
		return
	}
	c, ok := j.committed[k]
	switch {
	case !ok:
		invalid("no commitment")
		return
	case j.equivocated[k]:
		invalid("conflicting commitments")
		return
	}
	if err := d.Matches(c); err != nil {
		invalid("%v", err)
		return
	}
	j.valid[k] = d
	e := j.entries[mu.ID]
	if e == nil {
		e = &microEntry{mu: mu}
		j.entries[mu.ID] = e
	}
	e.results = append(e.results, d) // disclosures are sorted by processor within a MicroJob
}

// checkAgainstPlan returns the MicroJob of d, or why d does not fit this
// job's plan.
func (j *judging) checkAgainstPlan(d *Disclosure) (*jobs.MicroJob, string) {
	if d.Version != RecordVersion {
		return nil, fmt.Sprintf("record version %d", d.Version)
	}
	if d.JobID != j.jobID {
		return nil, fmt.Sprintf("for job %s", d.JobID)
	}
	mu, err := j.plan.MicroJob(d.MicroID)
	if err != nil {
		return nil, "not a MicroJob of the plan"
	}
	if d.MacroIndex != mu.Macro {
		return nil, fmt.Sprintf("MacroJob %d, plan says %d", d.MacroIndex, mu.Macro)
	}
	if !equalBlocks(d.BlockIndices, mu.Blocks) || len(d.BlockHashes) != len(mu.Blocks) {
		return nil, "block indices or hash count differ from the plan"
	}
	if !d.ResultCID.Defined() {
		return nil, "no result CID"
	}
	return mu, ""
}

// judgeMicroJob lists MicroJob mu's results, or lists it as missing, and
// its disputes between duplicates (or, under R > 1, its outvoted
// processors).
func (j *judging) judgeMicroJob(mu *jobs.MicroJob) {
	v := &j.v
	e := j.entries[mu.ID]
	if e == nil {
		v.Missing = append(v.Missing, mu.ID.String())
		return
	}
	for _, d := range e.results {
		v.Results = append(v.Results, newResult(mu, d))
	}
	if v.Replicas > 1 {
		v.Committed[mu.ID.String()] = j.committers[mu.ID]
		if outvoted, ok := majority(e.results, v.Replicas); ok {
			v.Culprits = append(v.Culprits, outvoted...)
			return
		}
	}
	// Duplicates: every pair of results that differ on a block.
	for x, a := range e.results {
		for _, d := range e.results[x+1:] {
			for i, b := range mu.Blocks {
				if a.BlockHashes[i] != d.BlockHashes[i] {
					v.Disputes = append(v.Disputes, newDispute(mu.Macro, b, mu, a, i, mu, d, i))
				}
			}
		}
	}
}

// judgeVerifier compares the verifier of MacroJob mac against its regular
// MicroJobs, block by block. Results of processors a replica majority
// already outvoted are not compared: they count for nothing.
func (j *judging) judgeVerifier(mac *jobs.MacroJob) error {
	ver := mac.Verifier()
	if ver == nil {
		return nil // a public plan: the checks are not drawn yet
	}
	ve := j.entries[ver.ID]
	if ve == nil {
		return nil
	}
	for pos, b := range ver.Blocks {
		reg, rpos, err := j.plan.Counterpart(ver.ID, pos)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrPlan, err)
		}
		re := j.entries[reg.ID]
		if re == nil {
			continue
		}
		for _, rd := range re.results {
			for _, vd := range ve.results {
				if slices.Contains(j.v.Culprits, rd.Processor) || slices.Contains(j.v.Culprits, vd.Processor) {
					continue
				}
				if rd.BlockHashes[rpos] != vd.BlockHashes[pos] {
					j.v.Disputes = append(j.v.Disputes, newDispute(mac.Index, b, reg, rd, rpos, ver, vd, pos))
				}
			}
		}
	}
	return nil
}

// majority reports, for the results of one MicroJob under R replicas,
// the processors outvoted by a majority: when the results differ and the
// largest group of equal results holds at least ⌊R/2⌋+1 of them (and no
// other group is as large), the processors outside that group. ok is
// false when the results all agree or no group has a majority.
func majority(results []*Disclosure, r uint32) (outvoted []string, ok bool) {
	groups := map[string][]string{}
	for _, d := range results {
		var k []byte
		for _, h := range d.BlockHashes {
			k = append(k, h[:]...)
		}
		groups[string(k)] = append(groups[string(k)], d.Processor)
	}
	if len(groups) < 2 {
		return nil, false
	}
	best, second := 0, 0
	var winner string
	for k, ps := range groups {
		switch n := len(ps); {
		case n > best:
			best, second, winner = n, best, k
		case n > second:
			second = n
		}
	}
	if best < int(r/2)+1 || best == second {
		return nil, false
	}
	for k, ps := range groups {
		if k != winner {
			outvoted = append(outvoted, ps...)
		}
	}
	slices.Sort(outvoted)
	return outvoted, true
}

func newResult(mu *jobs.MicroJob, d *Disclosure) Result {
	r := Result{
		Macro: mu.Macro, Slot: mu.Slot, MicroID: mu.ID.String(), Verifier: mu.Verifier,
		Processor: d.Processor, Wallet: d.Wallet, ResultCID: d.ResultCID.String(),
		Hashes: make([]string, len(d.BlockHashes)),
	}
	for i, h := range d.BlockHashes {
		r.Hashes[i] = hex.EncodeToString(h[:])
	}
	return r
}

func newDispute(macro, block uint64, amu *jobs.MicroJob, a *Disclosure, apos int, bmu *jobs.MicroJob, b *Disclosure, bpos int) Dispute {
	return Dispute{
		Macro:      macro,
		Block:      block,
		Micros:     [2]string{amu.ID.String(), bmu.ID.String()},
		Processors: [2]string{a.Processor, b.Processor},
		Hashes:     [2]string{hex.EncodeToString(a.BlockHashes[apos][:]), hex.EncodeToString(b.BlockHashes[bpos][:])},
	}
}
