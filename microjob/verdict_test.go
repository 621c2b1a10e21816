package microjob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jobmesh/jobmesh/ipfs"
	"github.com/jobmesh/jobmesh/jobs"
)

// blockOutput is the honest output of block b in the judge tests.
func blockOutput(b uint64) []byte { return fmt.Appendf(nil, "block %d\n", b) }

func honest(b uint64, out []byte) []byte { return out }

// fixture is a job of 12 one-byte blocks, N=3, K=2: two MacroJobs, each of
// three regular MicroJobs and a verifier of two blocks.
type fixture struct {
	info    *jobs.JobInfo
	plan    *jobs.Plan
	store   *ipfs.Node // nil: result CIDs are not backed by content
	procs   map[jobs.ID]string
	commits []Commitment
	discl   []Disclosure
}

func newFixture(t testing.TB, store *ipfs.Node) *fixture {
	t.Helper()
	data := []byte("abcdefghijkl")
	info, plan := newJob(t, []byte("code"), data, 1, 3, 2, jobs.Output{Kind: jobs.OutputConcat})
	f := &fixture{info: info, plan: plan, store: store, procs: map[jobs.ID]string{}}
	for m := range plan.Macros {
		for s := range plan.Macros[m].Micros {
			mu := &plan.Macros[m].Micros[s]
			p := newPeer(t)
			f.procs[mu.ID] = p
			f.add(t, mu, p, honest)
		}
	}
	return f
}

// records makes the commitment and disclosure of proc for mu, with block
// outputs rewritten by out; with a store, the outputs are stored too.
func (f *fixture) records(t testing.TB, mu *jobs.MicroJob, proc string, out func(uint64, []byte) []byte) (Commitment, Disclosure) {
	t.Helper()
	o := Output{BlockIndices: mu.Blocks}
	files := map[string][]byte{}
	for _, b := range mu.Blocks {
		res := out(b, blockOutput(b))
		o.BlockHashes = append(o.BlockHashes, sha256.Sum256(res))
		files[BlockFileName(b)] = res
	}
	if f.store != nil {
		c, err := f.store.AddDir(context.Background(), files)
		if err != nil {
			t.Fatal(err)
		}
		o.ResultCID = c
	} else {
		o.ResultCID = rawCID(t, []byte(proc+mu.ID.String()))
	}
	salt, err := NewSalt()
	if err != nil {
		t.Fatal(err)
	}
	d := o.Disclosure(f.plan, mu, proc, walletOf(proc), salt)
	c, err := d.Commitment()
	if err != nil {
		t.Fatal(err)
	}
	return c, d
}

func (f *fixture) add(t testing.TB, mu *jobs.MicroJob, proc string, out func(uint64, []byte) []byte) (Commitment, Disclosure) {
	t.Helper()
	c, d := f.records(t, mu, proc, out)
	f.commits, f.discl = append(f.commits, c), append(f.discl, d)
	return c, d
}

// replace drops mu's records and adds proc's, made with out.
func (f *fixture) replace(t *testing.T, mu *jobs.MicroJob, proc string, out func(uint64, []byte) []byte) {
	t.Helper()
	f.drop(mu)
	f.procs[mu.ID] = proc
	f.add(t, mu, proc, out)
}

func (f *fixture) drop(mu *jobs.MicroJob) {
	f.commits = slices.DeleteFunc(f.commits, func(c Commitment) bool { return c.MicroID == mu.ID })
	f.discl = slices.DeleteFunc(f.discl, func(d Disclosure) bool { return d.MicroID == mu.ID })
}

func (f *fixture) judge(t testing.TB) Verdict {
	t.Helper()
	v, err := Judge(f.info, f.plan, f.commits, f.discl)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// verifier returns MacroJob m's verifier and the regular MicroJob and
// position holding the verifier's block pos.
func (f *fixture) verifier(t *testing.T, m, pos int) (ver, reg *jobs.MicroJob, rpos int) {
	t.Helper()
	mac := &f.plan.Macros[m]
	ver = mac.Verifier()
	reg, rpos, err := f.plan.Counterpart(ver.ID, pos)
	if err != nil {
		t.Fatal(err)
	}
	return ver, reg, rpos
}

// lieOn corrupts the output of block only.
func lieOn(block uint64) func(uint64, []byte) []byte {
	return func(b uint64, out []byte) []byte {
		if b == block {
			return append(out, '!')
		}
		return out
	}
}

func hexOf(b []byte) string { return jobs.Hash(sha256.Sum256(b)).String() }

func TestJudgeAllAgree(t *testing.T) {
	f := newFixture(t, nil)
	v := f.judge(t)
	if !v.Complete || !v.Verified || len(v.Disputes)+len(v.Invalid)+len(v.Missing)+len(v.Redo)+len(v.Culprits) != 0 {
		t.Fatalf("honest job: %+v", v)
	}
	if len(v.Counts) != f.plan.NumMicroJobs() || len(v.ResultCIDs) != f.plan.NumMicroJobs() || len(v.Results) != f.plan.NumMicroJobs() {
		t.Fatalf("counts %d, CIDs %d, results %d, want %d each", len(v.Counts), len(v.ResultCIDs), len(v.Results), f.plan.NumMicroJobs())
	}
	for _, n := range v.Counts {
		if n != 1 {
			t.Fatalf("counts %v", v.Counts)
		}
	}
	for m := range f.plan.Macros {
		ver, _, _ := f.verifier(t, m, 0)
		var want []string
		for _, b := range ver.Blocks {
			want = append(want, hexOf(blockOutput(b)))
		}
		if !slices.Equal(v.VerifierHashes[uint64(m)], want) {
			t.Fatalf("MacroJob %d verifier hashes %v, want %v", m, v.VerifierHashes[uint64(m)], want)
		}
	}
}

func TestJudgeFindsRegularCulprit(t *testing.T) {
	f := newFixture(t, nil)
	ver, reg, rpos := f.verifier(t, 1, 0)
	liar := newPeer(t)
	f.replace(t, reg, liar, lieOn(reg.Blocks[rpos]))
	v := f.judge(t)
	want := Dispute{
		Macro: 1, Block: ver.Blocks[0], Micros: [2]string{reg.ID.String(), ver.ID.String()},
		Processors: [2]string{liar, f.procs[ver.ID]},
		Hashes:     [2]string{hexOf(append(blockOutput(ver.Blocks[0]), '!')), hexOf(blockOutput(ver.Blocks[0]))},
	}
	if v.Verified || !v.Complete || len(v.Disputes) != 1 || v.Disputes[0] != want {
		t.Fatalf("disputes %+v, want %+v", v.Disputes, want)
	}
	r, err := resolveBy(v, v.Disputes[0], sha256.Sum256(blockOutput(ver.Blocks[0])), newPeer(t))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Culprits, []string{liar}) || !slices.Equal(r.Redo, []string{reg.ID.String()}) {
		t.Fatalf("culprits %v redo %v", r.Culprits, r.Redo)
	}
	if _, ok := r.Counts[liar]; ok || r.Verified || r.Complete || len(r.Disputes) != 0 || len(r.Resolutions) != 1 {
		t.Fatalf("after resolve: %+v", r)
	}
	if _, ok := r.ResultCIDs[reg.ID.String()]; ok {
		t.Fatal("the culprit's result is still accepted")
	}
	// The redo, judged with the culprit's records left out, verifies.
	f.replace(t, reg, newPeer(t), honest)
	if v := f.judge(t); !v.Verified {
		t.Fatalf("after the redo: %+v", v)
	}
}

// TestJudgeMissesUnsampledLie documents the limit of N+1 sampling: a wrong
// block that the verifier did not draw passes.
func TestJudgeMissesUnsampledLie(t *testing.T) {
	f := newFixture(t, nil)
	ver, reg, _ := f.verifier(t, 0, 0)
	var unsampled uint64
	found := false
	for _, b := range reg.Blocks {
		if !slices.Contains(ver.Blocks, b) {
			unsampled, found = b, true
		}
	}
	if !found {
		t.Fatal("every block of this MicroJob is sampled; the fixture's seed changed")
	}
	f.replace(t, reg, newPeer(t), lieOn(unsampled))
	if v := f.judge(t); !v.Verified {
		t.Fatalf("an unsampled lie was caught, so the fixture is not what this test assumes: %+v", v.Disputes)
	}
}

func TestJudgeFindsVerifierCulprit(t *testing.T) {
	f := newFixture(t, nil)
	ver, reg, _ := f.verifier(t, 0, 1)
	liar := newPeer(t)
	f.replace(t, ver, liar, lieOn(ver.Blocks[1]))
	v := f.judge(t)
	if len(v.Disputes) != 1 || v.Disputes[0].Processors != [2]string{f.procs[reg.ID], liar} {
		t.Fatalf("disputes %+v", v.Disputes)
	}
	r, err := resolveBy(v, v.Disputes[0], sha256.Sum256(blockOutput(ver.Blocks[1])), newPeer(t))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Culprits, []string{liar}) || !slices.Equal(r.Redo, []string{ver.ID.String()}) || r.Verified {
		t.Fatalf("culprits %v redo %v verified %v", r.Culprits, r.Redo, r.Verified)
	}
	if _, ok := r.VerifierHashes[0]; ok {
		t.Fatal("a culprit verifier's hashes are still the proof")
	}
	if _, ok := r.ResultCIDs[reg.ID.String()]; !ok || r.Counts[f.procs[reg.ID]] != 1 {
		t.Fatal("the honest regular result lost its credit")
	}
}

func TestJudgeDuplicateResults(t *testing.T) {
	f := newFixture(t, nil)
	_, reg, _ := f.verifier(t, 0, 0)
	second := newPeer(t)
	f.add(t, reg, second, honest)
	v := f.judge(t)
	if !v.Verified || v.Counts[second] != 1 || v.Counts[f.procs[reg.ID]] != 1 {
		t.Fatalf("agreeing duplicate: verified %v counts %v", v.Verified, v.Counts)
	}
	first := min(second, f.procs[reg.ID])
	for _, r := range v.Results {
		if r.MicroID == reg.ID.String() && r.Processor == first && v.ResultCIDs[reg.ID.String()] != r.ResultCID {
			t.Fatal("the accepted result is not the first processor's in ID order")
		}
	}

	// A third processor disagrees on one block: a dispute inside the MicroJob.
	third := newPeer(t)
	f.add(t, reg, third, lieOn(reg.Blocks[len(reg.Blocks)-1]))
	v = f.judge(t)
	var inside []Dispute
	for _, d := range v.Disputes {
		if d.Micros[0] == d.Micros[1] {
			inside = append(inside, d)
		}
		if d.Processors[0] != third && d.Processors[1] != third {
			t.Fatalf("dispute without the odd one out: %+v", d)
		}
	}
	if len(inside) != 2 || v.Verified {
		t.Fatalf("want the odd result disputed against both others, got %+v", v.Disputes)
	}
	r, err := resolveBy(v, inside[0], sha256.Sum256(blockOutput(inside[0].Block)), newPeer(t))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Culprits, []string{third}) || len(r.Disputes) != 0 || len(r.Redo) != 0 || !r.Verified {
		t.Fatalf("after resolve: culprits %v disputes %v redo %v", r.Culprits, r.Disputes, r.Redo)
	}
}

func TestJudgeMissingMicroJobs(t *testing.T) {
	f := newFixture(t, nil)
	gone := &f.plan.Macros[1].Micros[0]
	f.drop(gone)
	// A disclosure whose commitment never arrived does not count either.
	noCommit := &f.plan.Macros[0].Micros[1]
	f.commits = slices.DeleteFunc(f.commits, func(c Commitment) bool { return c.MicroID == noCommit.ID })
	v := f.judge(t)
	want := []string{noCommit.ID.String(), gone.ID.String()}
	if !slices.Equal(v.Missing, want) || v.Complete || v.Verified {
		t.Fatalf("missing %v, want %v (plan order)", v.Missing, want)
	}
	if len(v.Invalid) != 1 || v.Invalid[0].Reason != "no commitment" {
		t.Fatalf("invalid %+v", v.Invalid)
	}
	if _, err := Assemble(context.Background(), f.info, f.plan, v, newStore(t)); !errors.Is(err, ErrNotReady) {
		t.Fatalf("assemble an incomplete job: %v", err)
	}
}

func TestJudgeInvalidDisclosures(t *testing.T) {
	f := newFixture(t, nil)
	mu := &f.plan.Macros[0].Micros[0]
	other := &f.plan.Macros[1].Micros[1]
	bad := map[string]func() (Commitment, Disclosure){
		"blocks": func() (Commitment, Disclosure) {
			_, d := f.records(t, mu, newPeer(t), honest)
			d.BlockIndices = slices.Clone(d.BlockIndices)
			d.BlockIndices[0]++
			c, _ := d.Commitment()
			return c, d
		},
		"macro": func() (Commitment, Disclosure) {
			_, d := f.records(t, mu, newPeer(t), honest)
			d.MacroIndex++
			c, _ := d.Commitment()
			return c, d
		},
		"job": func() (Commitment, Disclosure) {
			_, d := f.records(t, mu, newPeer(t), honest)
			d.JobID[0] ^= 1
			c, _ := d.Commitment()
			return c, d
		},
		"unknown micro": func() (Commitment, Disclosure) {
			_, d := f.records(t, mu, newPeer(t), honest)
			d.MicroID[0] ^= 1
			c, _ := d.Commitment()
			return c, d
		},
		"mismatch": func() (Commitment, Disclosure) {
			// The copier committed to a guess, then disclosed the real values.
			p := newPeer(t)
			c, _ := f.records(t, mu, p, lieOn(mu.Blocks[0]))
			_, d := f.records(t, mu, p, honest)
			return c, d
		},
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range bad {
			if !yield(k) {
				return
			}
		}
	})
	for _, name := range names {
		c, d := bad[name]()
		f.commits, f.discl = append(f.commits, c), append(f.discl, d)
	}
	// Equivocation: two commitments by one processor for one MicroJob.
	eq := newPeer(t)
	c1, d1 := f.records(t, other, eq, honest)
	c2, _ := f.records(t, other, eq, lieOn(other.Blocks[0]))
	f.commits, f.discl = append(f.commits, c1, c2), append(f.discl, d1)
	// A second, different disclosure by a processor that already has one.
	first := f.procs[mu.ID]
	_, again := f.records(t, mu, first, lieOn(mu.Blocks[0]))
	f.discl = append(f.discl, again)

	v := f.judge(t)
	if !v.Verified || len(v.Invalid) != len(bad)+2 {
		t.Fatalf("verified %v, %d invalid: %+v", v.Verified, len(v.Invalid), v.Invalid)
	}
	reasons := ""
	for _, inv := range v.Invalid {
		reasons += inv.Reason + "\n"
	}
	// The second disclosure by a processor cannot match its one commitment.
	for _, want := range []string{"not a MicroJob", "for job", "MacroJob", "block indices", "conflicting commitments", "does not match"} {
		if !strings.Contains(reasons, want) {
			t.Errorf("no invalid entry with %q in:\n%s", want, reasons)
		}
	}
	for p := range v.Counts {
		if p == eq {
			t.Fatal("an equivocating processor was credited")
		}
	}
}

func TestJudgeIsDeterministic(t *testing.T) {
	f := newFixture(t, nil)
	_, reg, rpos := f.verifier(t, 1, 1)
	f.add(t, reg, newPeer(t), lieOn(reg.Blocks[rpos]))
	f.add(t, &f.plan.Macros[0].Micros[0], newPeer(t), honest)
	f.discl = append(f.discl, f.discl[0]) // a repeated record changes nothing
	want := f.judge(t).Encode()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		rng.Shuffle(len(f.commits), func(i, j int) { f.commits[i], f.commits[j] = f.commits[j], f.commits[i] })
		rng.Shuffle(len(f.discl), func(i, j int) { f.discl[i], f.discl[j] = f.discl[j], f.discl[i] })
		if got := f.judge(t).Encode(); !bytes.Equal(got, want) {
			t.Fatalf("verdict depends on record order:\n%s\n%s", got, want)
		}
	}
	v, err := DecodeVerdict(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(v.Encode(), want) || !reflect.DeepEqual(v, f.judge(t)) {
		t.Fatal("verdict does not survive a round trip")
	}
}

func TestDecodeVerdictRefuses(t *testing.T) {
	good := string(newFixture(t, nil).judge(t).Encode())
	cases := map[string]struct {
		b    string
		want error
	}{
		"unknown field":  {strings.Replace(good, `{"version":2,`, `{"version":2,"x":0,`, 1), ErrMalformed},
		"version":        {strings.Replace(good, `{"version":2,`, `{"version":9,`, 1), ErrVersion},
		"whitespace":     {strings.Replace(good, `,"complete"`, ` ,"complete"`, 1), ErrNonCanonical},
		"null list":      {strings.Replace(good, `"disputes":[]`, `"disputes":null`, 1), ErrNonCanonical},
		"bad job":        {strings.Replace(good, `"job":"`, `"job":"zz`, 1), ErrMalformed},
		"trailing":       {good + "{}", ErrMalformed},
		"trailing space": {good + " ", ErrNonCanonical},
		"not json":       {"[", ErrMalformed},
	}
	for name, tc := range cases {
		if _, err := DecodeVerdict([]byte(tc.b)); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", name, err, tc.want)
		}
	}
	if err := strictJSON([]byte(good), len(good)-1, &Verdict{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
}

func TestAssembleChecksStoredOutputs(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	f := newFixture(t, store)
	var want []byte
	for b := range f.plan.NumBlocks {
		want = append(want, blockOutput(b)...)
	}
	v := f.judge(t)
	root, err := Assemble(ctx, f.info, f.plan, v, store)
	if err != nil {
		t.Fatal(err)
	}
	if got := catPath(t, store, root, "output.bin"); !bytes.Equal(got, want) {
		t.Fatalf("output %q, want %q", got, want)
	}

	// A processor discloses honest hashes but stores other bytes.
	mu := &f.plan.Macros[0].Micros[0]
	forger := "" // the processor whose directory disagrees with its hashes
	for i := range f.discl {
		if f.discl[i].MicroID == mu.ID {
			c, err := store.AddDir(ctx, map[string][]byte{BlockFileName(mu.Blocks[0]): []byte("forged"), BlockFileName(mu.Blocks[1]): blockOutput(mu.Blocks[1])})
			if err != nil {
				t.Fatal(err)
			}
			f.discl[i].ResultCID = c
			f.commits = slices.DeleteFunc(f.commits, func(x Commitment) bool { return x.MicroID == mu.ID })
			cm, _ := f.discl[i].Commitment()
			f.commits = append(f.commits, cm)
			forger = f.discl[i].Processor
		}
	}
	v = f.judge(t)
	if !v.Verified {
		t.Fatalf("hash-level verdict should not see the forgery: %+v", v)
	}
	if _, err := Assemble(ctx, f.info, f.plan, v, store); !errors.Is(err, ErrOutput) || !strings.Contains(err.Error(), forger) {
		t.Fatalf("forged directory: err = %v, want ErrOutput naming %s", err, forger)
	}
	// An honest duplicate lets assembly go on.
	f.add(t, mu, newPeer(t), honest)
	root, err = Assemble(ctx, f.info, f.plan, f.judge(t), store)
	if err != nil {
		t.Fatal(err)
	}
	if got := catPath(t, store, root, "output.bin"); !bytes.Equal(got, want) {
		t.Fatalf("output with fallback %q", got)
	}
	// A verdict of another job is refused.
	other := v
	other.JobID = strings.Repeat("0", 64)
	if _, err := Assemble(ctx, f.info, f.plan, other, store); !errors.Is(err, ErrPlan) {
		t.Fatalf("foreign verdict: %v", err)
	}
}

func FuzzDecodeVerdict(f *testing.F) {
	f.Add([]byte(`{"version":2,"job":"` + strings.Repeat("0", 64) + `","complete":true,"verified":true,"verifierHashes":{"0":["` +
		strings.Repeat("1", 64) + `"]},"counts":{"p":1},"resultCIDs":{},"disputes":[],"culprits":[],"missing":[],"redo":[],"invalid":[],"resolutions":[],"results":[]}`))
	f.Add([]byte(`{"version":2}`))
	fx := newFixture(f, nil)
	fx.add(f, &fx.plan.Macros[0].Micros[0], newPeer(f), lieOn(fx.plan.Macros[0].Micros[0].Blocks[0]))
	v := fx.judge(f)
	f.Add(v.Encode())
	if len(v.Disputes) > 0 {
		r, err := resolveBy(v, v.Disputes[0], [32]byte{}, newPeer(f))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(r.Encode())
	}
	// A replicated verdict with a culprit outvoted by the majority.
	rf, _ := newReplicaFixture(f, 3, map[int]func(uint64, []byte) []byte{1: lieOn(4)})
	f.Add(rf.judge(f).Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeVerdict(b)
		if err != nil {
			return
		}
		if !bytes.Equal(v.Encode(), b) {
			t.Fatalf("accepted a non-canonical encoding %q", b)
		}
	})
}
