package checksim

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"time"

	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/ipfs/go-cid"
	mh "github.com/multiformats/go-multihash"

	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// Run simulates cfg.Jobs jobs against cfg.Adversary and reports how often
// its lies are caught, in a Report of one Row.
func Run(cfg Config) (Report, error) {
	cfg.applyDefaults()
	if err := cfg.Validate(); err != nil {
		return Report{}, err
	}
	s, err := newSim(cfg)
	if err != nil {
		return Report{}, err
	}
	row := Row{
		Adversary: cfg.Adversary.Name(), Checks: cfg.checks(), Members: cfg.Adversary.Members(),
		Processors: cfg.Processors, K: cfg.K, Jobs: cfg.Jobs, Bound: bound(cfg),
	}
	for i := range cfg.Jobs {
		if err := s.job(&row); err != nil {
			return Report{}, fmt.Errorf("checksim: job %d: %w", i, err)
		}
	}
	return Report{Rows: []Row{row}}, nil
}

// processor is one simulated processor.
type processor struct {
	name   string
	wallet string
	result cid.Cid // the result CID of all its disclosures: judging reads only its presence
}

// sim is the state of one Run.
type sim struct {
	cfg   Config
	adv   Adversary
	rng   *rand.Rand // every draw but the adversary's
	arng  *rand.Rand // the adversary's draws
	procs []processor
	index map[string]int
	// creator is the DApp's wallet key, which signs the reveals.
	creator *ecdsa.PrivateKey
}

func newSim(cfg Config) (*sim, error) {
	s := &sim{
		cfg: cfg, adv: cfg.Adversary,
		rng:   rand.New(rand.NewPCG(cfg.Seed, 0x636865636b73696d)),
		arng:  rand.New(rand.NewPCG(cfg.Seed, 0x6164766572736172)),
		index: map[string]int{},
	}
	key := sha256.Sum256([]byte("checksim creator"))
	creator, err := ethcrypto.ToECDSA(key[:])
	if err != nil {
		return nil, fmt.Errorf("checksim: creator key: %w", err)
	}
	s.creator = creator
	for i := range cfg.Processors {
		name := fmt.Sprintf("p%d", i)
		w := sha256.Sum256([]byte(name))
		sum, err := mh.Sum([]byte(name), mh.SHA2_256, -1)
		if err != nil {
			return nil, fmt.Errorf("checksim: result CID: %w", err)
		}
		s.procs = append(s.procs, processor{name: name, wallet: "0x" + hex.EncodeToString(w[:20]), result: cid.NewCidV1(cid.Raw, sum)})
		s.index[name] = i
	}
	return s, nil
}

// member reports whether processor p is the adversary's.
func (s *sim) member(p int) bool { return p < s.adv.Members() }

// bytes32 draws 32 bytes: a secret seed or a salt.
func (s *sim) bytes32() [32]byte {
	var b [32]byte
	for i := 0; i < 32; i += 8 {
		binary.BigEndian.PutUint64(b[i:], s.rng.Uint64())
	}
	return b
}

// honest draws a processor outside the coalition.
func (s *sim) honest() int {
	return s.adv.Members() + s.rng.IntN(s.cfg.Processors-s.adv.Members())
}

// output is the output hash of block b: SHA256("block" ‖ uint64be(b)),
// or for a lie SHA256("lie" ‖ uint64be(b)), so that colluders' lies on a
// block agree.
func output(b uint64, lie bool) [32]byte {
	tag := "block"
	if lie {
		tag = "lie"
	}
	return sha256.Sum256(binary.BigEndian.AppendUint64([]byte(tag), b))
}

// newInfo returns a fresh job of cfg's shape, committed to secret.
func (s *sim) newInfo(secret jobs.Seed) *jobs.JobInfo {
	c := s.cfg
	info := &jobs.JobInfo{
		Code: jobs.Source{URI: "file:///checksim/code.wasm", SHA256: sha256.Sum256([]byte("checksim code"))},
		Data: jobs.Data{Source: jobs.Source{URI: "file:///checksim/data.bin", SHA256: sha256.Sum256([]byte("checksim data"))}, Size: c.Blocks},
		Slicing: jobs.Slicing{
			BlockSize: 1, MicroJobs: c.N, BlocksPerMicro: c.K, VerifierBlocks: c.KVerifier,
		},
		SeedCommitment: jobs.CommitSeed(secret),
		PriceWei:       big.NewInt(1),
		Creator:        jobs.Address(ethcrypto.PubkeyToAddress(s.creator.PublicKey)),
		Deadline:       2_000_000_000,
	}
	info.ApplyDefaults()
	return info
}

// run is one simulated job.
type run struct {
	s       *sim
	info    *jobs.JobInfo
	plan    *jobs.Plan // the public plan
	view    Job
	commits []microjob.Commitment
	discl   []microjob.Disclosure
	ran     map[jobs.ID][]int // who holds a commitment for each MicroJob
	lied    []*jobs.MicroJob  // the regular MicroJobs the liar lied in or copied
	liedAny bool              // a member disclosed a wrong output somewhere
	last    int               // index of the liar's last regular result in commits and discl; -1 for none
}

// job simulates one job and adds its counts to row.
func (s *sim) job(row *Row) error {
	secret := s.bytes32()
	info := s.newInfo(secret)
	plan, err := jobs.Slice(info)
	if err != nil {
		return err
	}
	r := &run{s: s, info: info, plan: plan, view: Job{Plan: plan, Rand: s.arng, lied: map[uint64]bool{}}, ran: map[jobs.ID][]int{}, last: -1}
	if s.cfg.Public {
		if r.view.Known, err = plan.WithChecks(info.SeedCommitment); err != nil {
			return err
		}
	}
	if err := r.regulars(); err != nil {
		return err
	}
	if err := r.grind(); err != nil {
		return err
	}
	seed, err := r.checkSeed(secret)
	if err != nil {
		return err
	}
	checked, err := plan.WithChecks(seed)
	if err != nil {
		return err
	}
	if err := r.verifiers(checked, row); err != nil {
		return err
	}
	v, err := microjob.Judge(info, checked, r.commits, r.discl)
	if err != nil {
		return err
	}
	r.score(v, r.selfChecks(checked, v, row), row)
	row.RegularBlocks += plan.NumBlocks
	return nil
}

// regulars assigns every regular MicroJob to a processor by a uniform draw
// and writes its commitment and disclosure.
func (r *run) regulars() error {
	for m := range r.plan.Macros {
		mac := &r.plan.Macros[m]
		for i := range mac.Micros[:mac.Regular] {
			mu := &mac.Micros[i]
			p := r.s.rng.IntN(r.s.cfg.Processors)
			if p != 0 { // only the liar's regular MicroJobs are the adversary's
				if err := r.add(r.result(p, mu, nil)); err != nil {
					return err
				}
				continue
			}
			mv := r.s.adv.Regular(&r.view, mu)
			if mv.Copy {
				if err := r.copy(mu); err != nil {
					return err
				}
				continue
			}
			lied := false
			for i, l := range mv.Lies {
				if l {
					r.view.lied[mu.Blocks[i]] = true
					lied = true
				}
			}
			if lied {
				r.lied = append(r.lied, mu)
				r.liedAny = true
			}
			r.last = len(r.commits)
			if err := r.add(r.result(p, mu, mv.Lies)); err != nil {
				return err
			}
		}
	}
	return nil
}

// result is processor p's disclosure of mu, wrong where lies says.
func (r *run) result(p int, mu *jobs.MicroJob, lies []bool) microjob.Disclosure {
	pr := r.s.procs[p]
	d := microjob.Disclosure{
		Version: microjob.RecordVersion, JobID: r.plan.JobID, MacroIndex: mu.Macro, MicroID: mu.ID,
		Processor: pr.name, Wallet: pr.wallet, BlockIndices: mu.Blocks,
		BlockHashes: make([][32]byte, len(mu.Blocks)), ResultCID: pr.result, Salt: r.s.bytes32(),
	}
	for i, b := range mu.Blocks {
		d.BlockHashes[i] = output(b, i < len(lies) && lies[i])
	}
	return d
}

// add commits and discloses d.
func (r *run) add(d microjob.Disclosure) error {
	c, err := d.Commitment()
	if err != nil {
		return err
	}
	r.commits = append(r.commits, c)
	r.discl = append(r.discl, d)
	r.ran[d.MicroID] = append(r.ran[d.MicroID], r.s.index[d.Processor])
	return nil
}

// copy has an honest processor run mu, and the liar commit that
// processor's commitment under its own name and disclose a guess.
func (r *run) copy(mu *jobs.MicroJob) error {
	if err := r.add(r.result(r.s.honest(), mu, nil)); err != nil {
		return err
	}
	liar := r.s.procs[0]
	c := r.commits[len(r.commits)-1]
	c.Processor, c.Wallet = liar.name, liar.wallet
	guess := r.result(0, mu, nil)
	for i := range guess.BlockHashes {
		guess.BlockHashes[i] = r.s.bytes32()
	}
	r.commits = append(r.commits, c)
	r.discl = append(r.discl, guess)
	r.ran[mu.ID] = append(r.ran[mu.ID], 0)
	r.lied = append(r.lied, mu)
	r.liedAny = true
	return nil
}

// checkSeed is the job's check seed once every regular MicroJob is
// committed, as a reader chooses it (finish.ChooseChecks): the secret
// from the DApp's signed reveal record, or, from a silent DApp, the lapse
// seed once the reveal timeout has passed. The public-seed baseline takes
// the seed commitment.
func (r *run) checkSeed(secret jobs.Seed) (jobs.Seed, error) {
	if r.s.cfg.Public {
		return r.info.SeedCommitment, nil
	}
	recs := &finish.Records{Commits: r.commits}
	want := finish.CheckLapsed
	if !r.s.cfg.Lapse {
		rec, err := records.SignReveal(r.plan.JobID, secret, r.s.creator)
		if err != nil {
			return jobs.Seed{}, err
		}
		recs.Reveals = []finish.Authored[[]byte]{{Key: records.RevealKey(r.plan.JobID, "dapp"), Author: "dapp", Rec: rec}}
		want = finish.CheckRevealed
	}
	const timeout = time.Minute
	c := finish.ChooseChecks(r.info, r.plan, recs, finish.ProgressOf(recs, 1), 2*timeout, timeout)
	if c.Source != want {
		return jobs.Seed{}, fmt.Errorf("%w: check seed %s, want %s (refused: %v)", errChecks, c.Source, want, c.Refused)
	}
	return c.Seed, nil
}

// errChecks: the check seed is not the one the run simulates.
var errChecks = errors.New("checksim: unexpected check seed")

// lapseSeed is the job's lapse seed from the commitments so far.
func (r *run) lapseSeed() jobs.Seed {
	return finish.LapseSeed(r.plan, &finish.Records{Commits: r.commits})
}

// grind lets a steering liar, committing last under a lapse seed, try
// new salts on its last commitment until no block it lied on is checked,
// at most Config.Salts tries in all.
func (r *run) grind() error {
	if !r.s.adv.Steers() || !r.s.cfg.Lapse || r.last < 0 {
		return nil
	}
	for try := 1; ; try++ {
		checked, err := r.plan.WithChecks(r.lapseSeed())
		if err != nil {
			return err
		}
		if !r.liesChecked(checked) || try >= r.s.cfg.Salts {
			return nil
		}
		d := &r.discl[r.last]
		d.Salt = r.s.bytes32()
		if r.commits[r.last], err = d.Commitment(); err != nil {
			return err
		}
	}
}

// liesChecked reports whether a verifier of checked holds a block the
// coalition lied on.
func (r *run) liesChecked(checked *jobs.Plan) bool {
	for m := range checked.Macros {
		if slices.ContainsFunc(checked.Macros[m].Verifier().Blocks, r.view.Lied) {
			return true
		}
	}
	return false
}

// verifiers draws each MacroJob's verifier runner among the processors
// that hold none of the MicroJobs it checks (among all of them when there
// is none) and writes its result.
func (r *run) verifiers(checked *jobs.Plan, row *Row) error {
	for m := range checked.Macros {
		mac := &checked.Macros[m]
		ver := mac.Verifier()
		busy := map[int]bool{}
		for _, src := range ver.Sources {
			for _, p := range r.ran[mac.Micros[src.Slot].ID] {
				busy[p] = true
			}
		}
		var free []int
		for p := range r.s.cfg.Processors {
			if !busy[p] {
				free = append(free, p)
			}
		}
		var p int
		if len(free) > 0 {
			p = free[r.s.rng.IntN(len(free))]
		} else {
			p = r.s.rng.IntN(r.s.cfg.Processors)
		}
		var lies []bool
		if r.s.member(p) {
			lies = r.s.adv.Verifier(&r.view, ver)
			r.liedAny = r.liedAny || slices.Contains(lies, true)
		}
		if err := r.add(r.result(p, ver, lies)); err != nil {
			return err
		}
		row.ExtraBlocks += uint64(len(ver.Blocks))
	}
	return nil
}
