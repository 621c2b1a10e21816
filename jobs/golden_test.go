package jobs

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden slicing vectors in testdata/")

const goldenPath = "testdata/slice_vectors.json"

// Golden vectors are written for other implementations: every field is in
// the protocol's own text form (hex IDs, decimal block indices).
type goldenFile struct {
	Spec   string       `json:"spec"`
	Stream goldenStream `json:"stream"`
	Cases  []goldenCase `json:"cases"`
}

type goldenStream struct {
	Seed  string   `json:"seed"`
	Macro uint64   `json:"macro"`
	Words []string `json:"words"` // successive Uint64 values, 16 hex digits
	// Uniform draws with n = 10 from a fresh stream of the same seed and macro.
	Uniform10 []uint64 `json:"uniform_10"`
}

type goldenCase struct {
	Name   string `json:"name"`
	Secret string `json:"secret"` // the DApp's check seed; the job carries keccak256 of it
	Job    string `json:"job"`    // canonical encoding
	JobID  string `json:"job_id"`
	// Macros is the plan with checks drawn from Secret: each MacroJob's
	// regular MicroJobs (the public plan), then its verifier.
	Macros []goldenMacro `json:"macros"`
}

type goldenMacro struct {
	Index  uint64        `json:"index"`
	ID     string        `json:"id"`
	Micros []goldenMicro `json:"micros"`
}

type goldenMicro struct {
	Slot     int           `json:"slot"`
	ID       string        `json:"id"`
	Verifier bool          `json:"verifier"`
	Blocks   []uint64      `json:"blocks"`
	Sources  []BlockSource `json:"sources,omitempty"`
}

// goldenSecret is the check seed of every golden case.
var goldenSecret = Seed(sha256.Sum256([]byte("jobmesh test seed")))

func goldenJobs() []struct {
	name string
	info *JobInfo
} {
	base := func(size, bs uint64, n, k, kv uint32) *JobInfo {
		j := &JobInfo{
			Code:           Source{URI: "ipfs://bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy", SHA256: sha256.Sum256([]byte("code"))},
			Data:           Data{Source: Source{URI: "https://data.example.org/input.bin", SHA256: sha256.Sum256([]byte("data"))}, Size: size},
			Slicing:        Slicing{BlockSize: bs, MicroJobs: n, BlocksPerMicro: k, VerifierBlocks: kv},
			SeedCommitment: CommitSeed(goldenSecret),
			PriceWei:       mustBig("1000000000000000000"),
			Creator:        mustAddress("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"),
			Deadline:       1_800_000_000,
		}
		j.ApplyDefaults()
		return j
	}
	return []struct {
		name string
		info *JobInfo
	}{
		{"worked: 1000 B, B=64, N=3, K=3, K'=2", base(1000, 64, 3, 3, 2)},
		{"one block in the last MacroJob: 640 B, B=64, N=3, K=3, K'=3", base(640, 64, 3, 3, 3)},
		{"defaults: 1 MiB, B=4096, N=10, K=10, K'=10", base(1<<20, 4096, 0, 0, 0)},
	}
}

func mustBig(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return v
}

func buildGolden(t *testing.T) goldenFile {
	t.Helper()
	seed := Seed(sha256.Sum256([]byte("jobmesh test seed")))
	g := goldenFile{Spec: "jobmesh slicing v2 (docs/PROTOCOL.md)", Stream: goldenStream{Seed: seed.String(), Macro: 3}}
	s := NewStream(seed, 3)
	for range 8 {
		g.Stream.Words = append(g.Stream.Words, fmt.Sprintf("%016x", s.Uint64()))
	}
	s = NewStream(seed, 3)
	for range 8 {
		g.Stream.Uniform10 = append(g.Stream.Uniform10, s.Uniform(10))
	}
	for _, c := range goldenJobs() {
		public, err := Slice(c.info)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		p, err := public.WithChecks(goldenSecret)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		gc := goldenCase{Name: c.name, Secret: goldenSecret.String(), Job: string(c.info.Encode()), JobID: p.JobID.String()}
		for _, m := range p.Macros {
			gm := goldenMacro{Index: m.Index, ID: m.ID.String()}
			for _, mu := range m.Micros {
				gm.Micros = append(gm.Micros, goldenMicro{Slot: mu.Slot, ID: mu.ID.String(), Verifier: mu.Verifier, Blocks: mu.Blocks, Sources: mu.Sources})
			}
			gc.Macros = append(gc.Macros, gm)
		}
		g.Cases = append(g.Cases, gc)
	}
	return g
}

func TestGoldenSliceVectors(t *testing.T) {
	got, err := json.MarshalIndent(buildGolden(t), "", " ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(goldenPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("%v (run go test ./jobs -run Golden -update to create)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("slicing differs from %s; if the change is intended, bump the spec version and run with -update", goldenPath)
	}

	// The stored jobs decode to the stored IDs: the vectors are usable from
	// the file alone.
	var g goldenFile
	if err := json.Unmarshal(want, &g); err != nil {
		t.Fatal(err)
	}
	for _, c := range g.Cases {
		info, err := Decode([]byte(c.Job))
		if err != nil {
			t.Fatalf("%s: stored job does not decode: %v", c.Name, err)
		}
		if info.ID().String() != c.JobID {
			t.Fatalf("%s: ID %s, stored %s", c.Name, info.ID(), c.JobID)
		}
		if CommitSeed(goldenSecret) != info.SeedCommitment {
			t.Fatalf("%s: seed commitment is not keccak256 of the case's secret", c.Name)
		}
		checkPlan(t, info, sliceChecked(t, info))
	}
}
