package jobs

import (
	"crypto/sha256"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"
)

var testNow = time.Unix(1_800_000_000, 0)

const testModelCID = "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy"

// validJob returns a valid JobInfo with every optional field set.
func validJob() *JobInfo {
	j := &JobInfo{
		Code: Source{URI: "ipfs://bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy", SHA256: sha256.Sum256([]byte("code"))},
		Data: Data{
			Source: Source{URI: "https://data.example.org/input.bin?x=1", SHA256: sha256.Sum256([]byte("data"))},
			Size:   1000,
		},
		Slicing:        Slicing{BlockSize: 64, MicroJobs: 3, BlocksPerMicro: 3, VerifierBlocks: 2},
		SeedCommitment: sha256.Sum256([]byte("seed")),
		PriceWei:       big.NewInt(1_000_000_000_000_000_000),
		Requirements: Requirements{
			MinVRAMMiB: 8192,
			GPUModel:   "NVIDIA GeForce RTX 4090",
			ModelCIDs:  []string{testModelCID},
			Replicas:   1,
		},
		Creator:  mustAddress("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"),
		Deadline: testNow.Unix() + 3600,
		Output:   Output{Kind: OutputPNGGrid, Columns: 4},
		TaskSize: 42,
	}
	j.ApplyDefaults()
	return j
}

func mustAddress(s string) Address {
	a, err := ParseAddress(s)
	if err != nil {
		panic(err)
	}
	return a
}

func TestValidateAcceptsValidJob(t *testing.T) {
	if err := validJob().Validate(testNow); err != nil {
		t.Fatalf("Validate: %v", err)
	}
}

func TestApplyDefaults(t *testing.T) {
	j := &JobInfo{}
	j.ApplyDefaults()
	s := j.Slicing
	if j.Version != SchemaVersion || s.MicroJobs != 10 || s.BlocksPerMicro != 10 || s.VerifierBlocks != 10 ||
		j.Requirements.Replicas != 1 || j.Output.Kind != OutputConcat {
		t.Fatalf("defaults not applied: %+v", j)
	}
	// K' defaults to K but never above N.
	j = &JobInfo{Slicing: Slicing{MicroJobs: 4, BlocksPerMicro: 10}}
	j.ApplyDefaults()
	if j.Slicing.VerifierBlocks != 4 {
		t.Fatalf("K' = %d, want min(K, N) = 4", j.Slicing.VerifierBlocks)
	}
}

func TestValidateRejectsEachBadField(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(j *JobInfo)
		want   error
		field  string
	}{
		{"empty code uri", func(j *JobInfo) { j.Code.URI = "" }, ErrInvalidURI, "code.uri"},
		{"unsupported scheme", func(j *JobInfo) { j.Data.URI = "gopher://x/y" }, ErrInvalidURI, "data.uri"},
		{"bad ipfs cid", func(j *JobInfo) { j.Code.URI = "ipfs://notacid" }, ErrInvalidURI, "code.uri"},
		{"non-canonical ipfs cid", func(j *JobInfo) { j.Code.URI = "ipfs://" + strings.ToUpper(testModelCID) }, ErrInvalidURI, "code.uri"},
		{"sftp without user", func(j *JobInfo) { j.Data.URI = "sftp://host:22/data" }, ErrInvalidURI, "data.uri"},
		{"sftp with password", func(j *JobInfo) { j.Data.URI = "sftp://u:pw@host:22/data" }, ErrInvalidURI, "data.uri"},
		{"file with host", func(j *JobInfo) { j.Data.URI = "file://host/data" }, ErrInvalidURI, "data.uri"},
		{"uri with space", func(j *JobInfo) { j.Data.URI = "https://a/b c" }, ErrInvalidURI, "data.uri"},
		{"uri with quote", func(j *JobInfo) { j.Data.URI = `https://a/b"c` }, ErrInvalidURI, "data.uri"},
		{"uri with fragment", func(j *JobInfo) { j.Data.URI = "https://a/b#c" }, ErrInvalidURI, "data.uri"},
		{"https without host", func(j *JobInfo) { j.Data.URI = "https:///path" }, ErrInvalidURI, "data.uri"},
		{"uri too long", func(j *JobInfo) { j.Data.URI = "https://a/" + strings.Repeat("x", MaxURILength) }, ErrInvalidURI, "data.uri"},
		{"missing code hash", func(j *JobInfo) { j.Code.SHA256 = Hash{} }, ErrInvalidHash, "code.sha256"},
		{"missing data hash", func(j *JobInfo) { j.Data.SHA256 = Hash{} }, ErrInvalidHash, "data.sha256"},
		{"zero data size", func(j *JobInfo) { j.Data.Size = 0 }, ErrInvalidSlicing, "data.size"},
		{"zero block size", func(j *JobInfo) { j.Slicing.BlockSize = 0 }, ErrInvalidSlicing, "slicing.block_size"},
		{"huge block size", func(j *JobInfo) { j.Slicing.BlockSize = MaxBlockSize + 1 }, ErrInvalidSlicing, "slicing.block_size"},
		{"too many blocks", func(j *JobInfo) { j.Data.Size = MaxBlocks*64 + 1 }, ErrInvalidSlicing, "slicing.block_size"},
		{"too many MicroJobs", func(j *JobInfo) { j.Data.Size = (MaxMicroJobs + 1) * 64; j.Slicing.BlocksPerMicro = 1 }, ErrInvalidSlicing, "slicing.k"},
		{"zero N", func(j *JobInfo) { j.Slicing.MicroJobs = 0 }, ErrInvalidSlicing, "slicing.n"},
		{"huge N", func(j *JobInfo) { j.Slicing.MicroJobs = 1001 }, ErrInvalidSlicing, "slicing.n"},
		{"zero K", func(j *JobInfo) { j.Slicing.BlocksPerMicro = 0 }, ErrInvalidSlicing, "slicing.k"},
		{"huge K", func(j *JobInfo) { j.Slicing.BlocksPerMicro = 1001 }, ErrInvalidSlicing, "slicing.k"},
		{"K' above N", func(j *JobInfo) { j.Slicing.VerifierBlocks = 4 }, ErrInvalidSlicing, "slicing.k_verifier"},
		{"zero K'", func(j *JobInfo) { j.Slicing.VerifierBlocks = 0 }, ErrInvalidSlicing, "slicing.k_verifier"},
		{"missing seed", func(j *JobInfo) { j.SeedCommitment = Seed{} }, ErrMissingSeed, "seed_commitment"},
		{"nil price", func(j *JobInfo) { j.PriceWei = nil }, ErrInvalidPrice, "price_wei"},
		{"zero price", func(j *JobInfo) { j.PriceWei = big.NewInt(0) }, ErrInvalidPrice, "price_wei"},
		{"negative price", func(j *JobInfo) { j.PriceWei = big.NewInt(-5) }, ErrInvalidPrice, "price_wei"},
		{"price above uint256", func(j *JobInfo) { j.PriceWei = new(big.Int).Lsh(big.NewInt(1), 256) }, ErrInvalidPrice, "price_wei"},
		{"huge vram", func(j *JobInfo) { j.Requirements.MinVRAMMiB = MaxMinVRAMMiB + 1 }, ErrInvalidRequirements, "requirements.min_vram_mib"},
		{"gpu model control char", func(j *JobInfo) { j.Requirements.GPUModel = "RTX\n4090" }, ErrInvalidRequirements, "requirements.gpu_model"},
		{"gpu model padded", func(j *JobInfo) { j.Requirements.GPUModel = " RTX" }, ErrInvalidRequirements, "requirements.gpu_model"},
		{"bad model cid", func(j *JobInfo) { j.Requirements.ModelCIDs = []string{"x"} }, ErrInvalidRequirements, "requirements.model_cids[0]"},
		{"duplicate model cid", func(j *JobInfo) { j.Requirements.ModelCIDs = []string{testModelCID, testModelCID} }, ErrInvalidRequirements, "requirements.model_cids[1]"},
		{"zero replicas", func(j *JobInfo) { j.Requirements.Replicas = 0 }, ErrInvalidRequirements, "requirements.replicas"},
		{"too many replicas", func(j *JobInfo) { j.Requirements.Replicas = MaxReplicas + 1 }, ErrInvalidRequirements, "requirements.replicas"},
		{"replicas overflow a room's queue", func(j *JobInfo) { j.Slicing.MicroJobs, j.Requirements.Replicas = 1000, 5 }, ErrInvalidRequirements, "requirements.replicas"},
		{"zero wallet", func(j *JobInfo) { j.Creator = Address{} }, ErrInvalidWallet, "creator"},
		{"deadline in the past", func(j *JobInfo) { j.Deadline = testNow.Unix() - 1 }, ErrInvalidDeadline, "deadline"},
		{"deadline now", func(j *JobInfo) { j.Deadline = testNow.Unix() }, ErrInvalidDeadline, "deadline"},
		{"unknown output kind", func(j *JobInfo) { j.Output.Kind = "zip" }, ErrInvalidOutput, "output.kind"},
		{"grid without columns", func(j *JobInfo) { j.Output.Columns = 0 }, ErrInvalidOutput, "output.columns"},
		{"concat with columns", func(j *JobInfo) { j.Output.Kind = OutputConcat }, ErrInvalidOutput, "output.columns"},
		{"huge task size", func(j *JobInfo) { j.TaskSize = MaxTaskSize + 1 }, ErrInvalidTaskSize, "task_size"},
		{"unknown version", func(j *JobInfo) { j.Version = 3 }, ErrUnsupportedVersion, "version"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob()
			tc.mutate(j)
			err := j.Validate(testNow)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Validate = %v, want %v", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), tc.field+": ") {
				t.Fatalf("error %q does not name field %q", err, tc.field)
			}
		})
	}
}

func TestValidateCollectsAllErrors(t *testing.T) {
	j := validJob()
	j.Code.URI = ""
	j.SeedCommitment = Seed{}
	j.PriceWei = big.NewInt(0)
	j.Slicing.BlockSize = 0
	j.Creator = Address{}
	err := j.Validate(testNow)
	for _, want := range []error{ErrInvalidURI, ErrMissingSeed, ErrInvalidPrice, ErrInvalidSlicing, ErrInvalidWallet} {
		if !errors.Is(err, want) {
			t.Errorf("joined error %v lacks %v", err, want)
		}
	}
	if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 5 {
		t.Errorf("got %d field errors, want 5: %v", n, err)
	}
}

func TestValidateURISchemes(t *testing.T) {
	for _, ok := range []string{
		"ipfs://" + testModelCID,
		"ipfs://" + testModelCID + "/dir/file.wasm",
		"https://example.org/a.wasm",
		"http://127.0.0.1:8080/a",
		"sftp://user@host.example:2222/srv/data.bin",
		"ws://127.0.0.1:9000/stream",
		"wss://example.org/stream",
		"file:///var/lib/jobmesh/data.bin",
	} {
		if err := ValidateURI(ok); err != nil {
			t.Errorf("ValidateURI(%q) = %v", ok, err)
		}
	}
}

func TestParseAddress(t *testing.T) {
	// EIP-55 test vectors.
	for _, s := range []string{
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
		"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
		"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
		"0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
	} {
		a, err := ParseAddress(s)
		if err != nil {
			t.Fatalf("ParseAddress(%q): %v", s, err)
		}
		if got := a.Checksummed(); got != s {
			t.Errorf("Checksummed = %q, want %q", got, s)
		}
		if a.String() != strings.ToLower(s) {
			t.Errorf("String = %q", a.String())
		}
	}
	for _, bad := range []string{
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", // checksum broken
		"5aaeb6053f3e94c9b9a09f33669435e7ef1beaed",
		"0x5aaeb6053f3e94c9b9a09f33669435e7ef1bea",
		"0xzzaeb6053f3e94c9b9a09f33669435e7ef1beaed",
	} {
		if _, err := ParseAddress(bad); !errors.Is(err, ErrInvalidWallet) {
			t.Errorf("ParseAddress(%q) = %v, want ErrInvalidWallet", bad, err)
		}
	}
}
