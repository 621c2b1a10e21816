package finish

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/internal/scripttest"

	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"
	mh "github.com/multiformats/go-multihash"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

var update = flag.Bool("update", false, "rewrite the expected output of testdata scripts")

// TestScripts runs the finishing scripts in testdata/*.txt, in the form
// of macrojob's queue scripts: a command line, a line "----", then the
// expected output up to a blank line; # starts a comment. Run with
// -update to rewrite the expected output.
//
// The job has two MacroJobs, each of two regular one-block MicroJobs and
// a verifier that repeats one of their blocks. Processors are named by
// one letter; times are durations since the script's start.
//
// Commands:
//
//	new [replicas=N] [margin=M max=R]     a fresh job with no records, judged with
//	                                      Escalation{M, R} (default DefaultEscalation)
//	run <p> m=<macro> regular|verifier|micro=<i> [lie] [silent]
//	                                      p's results (silent: commitments only)
//	dispute <by> third=<p> [more=p,..] [dropped=p,..] [exhausted]
//	                                      by's disputes of its judgement's disputed blocks
//	escalate <by> procs=p,.. [silent=p,..] by's next dispute requests (NextRequest)
//	rule asked=N [votes=r|w|o,..] [exhausted]
//	                                      the dispute rule on a right and a wrong side with
//	                                      N re-runners asked, votes those that answered
//	check <by> thirds=p,q [more=p,..] [dropped=p,..] [exhausted]
//	                                      by's checks of its self-checked blocks
//	rerun <p> block=<b> [lie]             p's re-run of block b
//	redo <by> [silent]                    the redo records Decide has by write (silent: of SilentCommitters)
//	hear <p> at=<d>                       p heard "finalizing" at d
//	verdict <by> [lockers=m:p,..]         by's verdict record, as its judgement has it
//	                                      (lockers: with p named a locker of MacroJob m)
//	took <p> m=<macro> [by=<q>]           p's took record (by: under p's key, written by q)
//	rounds                                the rounds every reader derives, as QoS tasks
//	decide <self> at=<d> [procs=p,..]     self's judgement and decision at d
//	choose [procs=p,..]                   the verdict a reader counts
//	verifiers procs=p,.. [owners=p|-,..]  who runs each verifier MicroJob, in rank
//	due <self> since=<d> [max=N]          the verifiers self runs d after the ranks
func TestScripts(t *testing.T) {
	scripttest.RunAll(t, "testdata/*.txt", *update, func(t *testing.T) func(string) string {
		s := &script{t: t}
		return func(cmd string) string {
			if out := s.run(cmd); out != "" {
				return out
			}
			return "ok"
		}
	})
}

// script is one job's records and what its processors heard and kept.
type script struct {
	t        *testing.T
	info     *jobs.JobInfo
	plan     *jobs.Plan
	recs     []crdt.Record
	seq      uint64
	heard    map[string]time.Time
	complete map[string]time.Time // per processor, Decision.Complete
	ranks    [][]string           // the verifier runners, by MacroJob
	esc      Escalation           // the dispute rule judging uses
	cands    []Candidate          // the reader's re-run candidates (Records.Candidates)
}

var start = time.Unix(1_000_000, 0).UTC()

// pid is the peer ID string of processor name; name is its inverse.
// (an identity multihash of the name).
func pid(name string) string {
	h, _ := mh.Sum([]byte(name), mh.IDENTITY, -1)
	return peer.ID(h).String()
}

func name(p string) string {
	id, err := peer.Decode(p)
	if err != nil {
		return p
	}
	dm, err := mh.Decode([]byte(id))
	if err != nil {
		return p
	}
	return string(dm.Digest)
}

func names(ps []string) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = name(p)
	}
	return "[" + strings.Join(out, ",") + "]"
}

func pids(list string) []string {
	if list == "" {
		return nil
	}
	var out []string
	for _, n := range strings.Split(list, ",") {
		out = append(out, pid(n))
	}
	return out
}

func (s *script) run(line string) string {
	fs := strings.Fields(line)
	args := map[string]string{}
	var pos []string
	for _, f := range fs[1:] {
		if k, v, ok := strings.Cut(f, "="); ok {
			args[k] = v
		} else {
			pos = append(pos, f)
		}
	}
	if fs[0] != "new" && s.plan == nil {
		s.t.Fatalf("%s: no job: start with new", line)
	}
	switch fs[0] {
	case "new":
		return s.newJob(args)
	case "run":
		return s.runMicros(pos[0], args, pos[1:])
	case "dispute":
		return s.dispute(pos[0], args, slices.Contains(pos, "exhausted"))
	case "escalate":
		return s.escalate(pos[0], args)
	case "rule":
		return s.rule(args, slices.Contains(pos, "exhausted"))
	case "candidates":
		s.cands = nil
		if len(pos) > 0 {
			s.cands = PeerCandidates(pids(pos[0]))
		}
		return ""
	case "order":
		return s.order(args)
	case "check":
		return s.check(pos[0], args, slices.Contains(pos, "exhausted"))
	case "rerun":
		return s.rerun(pos[0], args, slices.Contains(pos, "lie"))
	case "redo":
		return s.redo(pos[0], slices.Contains(pos, "silent"))
	case "hear":
		s.heard[pid(pos[0])] = s.at(args["at"])
		return ""
	case "verdict":
		return s.verdict(pos[0], args)
	case "took":
		return s.took(pos[0], args)
	case "rounds":
		return s.rounds()
	case "decide":
		return s.decide(pos[0], args)
	case "choose":
		return s.choose(args)
	case "superseded":
		return s.superseded(pos[0])
	case "propose":
		return s.propose(pos[0])
	case "verifiers":
		return s.verifiers(args)
	case "due":
		return s.due(pos[0], args)
	}
	s.t.Fatalf("unknown command %q", line)
	return ""
}

func (s *script) at(d string) time.Time {
	if d == "" {
		return start
	}
	v, err := time.ParseDuration(d)
	if err != nil {
		s.t.Fatal(err)
	}
	return start.Add(v)
}

func (s *script) newJob(args map[string]string) string {
	var replicas uint32
	if r, ok := args["replicas"]; ok {
		n, _ := strconv.Atoi(r)
		replicas = uint32(n)
	}
	esc := DefaultEscalation()
	if m, ok := args["margin"]; ok {
		esc.Margin, _ = strconv.Atoi(m)
		esc.MaxReruns, _ = strconv.Atoi(args["max"])
	}
	info, plan := sliceTestJob(s.t, replicas)
	*s = script{t: s.t, info: info, plan: plan, heard: map[string]time.Time{}, complete: map[string]time.Time{}, esc: esc}
	if replicas <= 1 {
		// The DApp's node (z) has revealed the check seed the plan's
		// verifiers come from.
		rec, err := records.SignReveal(info.ID(), testCheckSeed, testCreator)
		if err != nil {
			s.t.Fatal(err)
		}
		s.put(pid("z"), records.RevealKey(info.ID(), pid("z")), records.RevealType, rec)
	}
	return ""
}

// testCreator is the wallet key of the scripts' job's creator.
var testCreator = func() *ecdsa.PrivateKey {
	k, err := ethcrypto.ToECDSA(ethcrypto.Keccak256([]byte("script creator")))
	if err != nil {
		panic(err)
	}
	return k
}()

// sliceTestJob is the scripts' job, of replicas processors per MicroJob
// (0: the default): two MacroJobs, each of two regular one-block
// MicroJobs and a verifier.
func sliceTestJob(t testing.TB, replicas uint32) (*jobs.JobInfo, *jobs.Plan) {
	info := &jobs.JobInfo{
		Code:           jobs.Source{URI: "ipfs://bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy", SHA256: sha256.Sum256([]byte("code"))},
		Data:           jobs.Data{Source: jobs.Source{URI: "https://example.com/data", SHA256: sha256.Sum256([]byte("data"))}, Size: 4 * 64},
		Slicing:        jobs.Slicing{BlockSize: 64, MicroJobs: 2, BlocksPerMicro: 1},
		SeedCommitment: jobs.CommitSeed(testCheckSeed),
		PriceWei:       big.NewInt(5),
		Creator:        jobs.Address(ethcrypto.PubkeyToAddress(testCreator.PublicKey)),
		Deadline:       start.Add(time.Hour).Unix(),
		Requirements:   jobs.Requirements{Replicas: replicas},
	}
	info.ApplyDefaults()
	check := testCheckSeed
	if replicas > 1 {
		check = info.SeedCommitment
	}
	plan, err := jobs.SliceChecked(info, check)
	if err != nil {
		t.Fatal(err)
	}
	return info, plan
}

// testCheckSeed is the check seed of the scripts' job of one replica, as
// if its DApp had revealed it.
var testCheckSeed = jobs.Seed{1}

// put stores one record of author, replacing the record under its key.
func (s *script) put(author, key, typ string, payload []byte) {
	s.recs = slices.DeleteFunc(s.recs, func(r crdt.Record) bool { return r.Key == key })
	s.seq++
	id, err := peer.Decode(author)
	if err != nil {
		s.t.Fatal(err)
	}
	s.recs = append(s.recs, crdt.Record{Key: key, Type: typ, Payload: payload, Author: id, Seq: s.seq})
}

func (s *script) putJSON(author, key, typ string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.t.Fatal(err)
	}
	s.put(author, key, typ, b)
}

// hash is block b's output hash: the honest one, or a liar's.
func hash(b uint64, lie bool) [32]byte {
	if lie {
		return sha256.Sum256(fmt.Appendf(nil, "lie %d", b))
	}
	return sha256.Sum256(fmt.Appendf(nil, "block %d", b))
}

func testCID(s string) cid.Cid {
	h, _ := mh.Sum([]byte(s), mh.SHA2_256, -1)
	return cid.NewCidV1(cid.Raw, h)
}
