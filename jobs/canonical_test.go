package jobs

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	j := validJob()
	enc := j.Encode()
	if !json.Valid(enc) {
		t.Fatalf("encoding is not JSON: %s", enc)
	}
	got, err := Decode(enc)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if !bytes.Equal(got.Encode(), enc) {
		t.Fatalf("re-encoding differs:\n%s\n%s", got.Encode(), enc)
	}
	if got.ID() != j.ID() || j.ID() != sha256.Sum256(enc) {
		t.Fatal("ID is not SHA-256 of the canonical encoding")
	}
	if got.PriceWei.Cmp(j.PriceWei) != 0 || got.Creator != j.Creator || got.SeedCommitment != j.SeedCommitment {
		t.Fatalf("fields lost: %+v", got)
	}
}

func TestEncodeGolden(t *testing.T) {
	// Pins the byte layout; a change here changes every job ID.
	j := validJob()
	want := `{"version":2,"code":{"uri":"ipfs://bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy","sha256":"` +
		Hash(sha256.Sum256([]byte("code"))).String() + `"},"data":{"uri":"https://data.example.org/input.bin?x=1","sha256":"` +
		Hash(sha256.Sum256([]byte("data"))).String() + `","size":1000},"slicing":{"block_size":64,"n":3,"k":3,"k_verifier":2},"seed_commitment":"` +
		Hash(sha256.Sum256([]byte("seed"))).String() + `","price_wei":"1000000000000000000","requirements":{"min_vram_mib":8192,` +
		`"gpu_model":"NVIDIA GeForce RTX 4090","model_cids":["` + testModelCID + `"],"replicas":1},` +
		`"creator":"0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed","deadline":1800003600,"output":{"kind":"png-grid","columns":4},"task_size":42}`
	if got := string(j.Encode()); got != want {
		t.Fatalf("Encode =\n%s\nwant\n%s", got, want)
	}
}

func TestDecodeRejectsNonCanonical(t *testing.T) {
	enc := string(validJob().Encode())
	mutations := map[string]func(string) string{
		"whitespace":       func(s string) string { return strings.Replace(s, `"version":2,`, `"version": 2,`, 1) },
		"trailing newline": func(s string) string { return s + "\n" },
		"field order":      func(s string) string { return "{" + s[len(`{"version":2,`):len(s)-1] + `,"version":2}` },
		"uppercase hash": func(s string) string {
			return strings.Replace(s, `"seed_commitment":"`+validJob().SeedCommitment.String(), `"seed_commitment":"`+strings.ToUpper(validJob().SeedCommitment.String()), 1)
		},
		"checksummed wallet": func(s string) string {
			return strings.Replace(s, "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", 1)
		},
		"price leading zero": func(s string) string { return strings.Replace(s, `"price_wei":"1`, `"price_wei":"01`, 1) },
		"price plus sign":    func(s string) string { return strings.Replace(s, `"price_wei":"1`, `"price_wei":"+1`, 1) },
		"null model cids":    func(s string) string { return strings.Replace(s, `["`+testModelCID+`"]`, `null`, 1) },
		"duplicate key": func(s string) string {
			return strings.Replace(s, `"task_size":42}`, `"task_size":42,"task_size":42}`, 1)
		},
		"key case":             func(s string) string { return strings.Replace(s, `"task_size"`, `"TASK_SIZE"`, 1) },
		"escaped char":         func(s string) string { return strings.Replace(s, `"kind":"png-grid"`, `"kind":"png\u002dgrid"`, 1) },
		"number with exponent": func(s string) string { return strings.Replace(s, `"task_size":42`, `"task_size":4.2e1`, 1) },
	}
	for name, mutate := range mutations {
		t.Run(name, func(t *testing.T) {
			in := mutate(enc)
			if in == enc {
				t.Fatal("mutation did not change the input")
			}
			if _, err := Decode([]byte(in)); err == nil {
				t.Fatalf("Decode accepted %s", in)
			}
		})
	}
	// The purely lexical changes are reported as ErrNonCanonical.
	for _, name := range []string{"whitespace", "field order", "checksummed wallet", "price leading zero", "null model cids", "duplicate key", "key case", "escaped char"} {
		if _, err := Decode([]byte(mutations[name](enc))); !errors.Is(err, ErrNonCanonical) {
			t.Errorf("%s: err = %v, want ErrNonCanonical", name, err)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	enc := string(validJob().Encode())
	cases := []struct {
		name string
		in   string
		want error
	}{
		{"too large", strings.Repeat(" ", MaxEncodedSize+1), ErrTooLarge},
		{"not json", "{", ErrMalformed},
		{"no version", `{}`, ErrMalformed},
		{"other version", strings.Replace(enc, `"version":2`, `"version":3`, 1), ErrUnsupportedVersion},
		{"version 0", strings.Replace(enc, `"version":2`, `"version":0`, 1), ErrUnsupportedVersion},
		{"unknown field", strings.Replace(enc, `"task_size":42}`, `"task_size":42,"extra":1}`, 1), ErrMalformed},
		{"negative size", strings.Replace(enc, `"size":1000`, `"size":-1`, 1), ErrMalformed},
		{"bad hash", strings.Replace(enc, `"sha256":"`, `"sha256":"zz`, 1), ErrInvalidHash},
		{"zero seed", strings.Replace(enc, validJob().SeedCommitment.String(), strings.Repeat("0", 64), 1), ErrMissingSeed},
		{"bad price", strings.Replace(enc, `"price_wei":"1`, `"price_wei":"x1`, 1), ErrInvalidPrice},
		{"bad wallet", strings.Replace(enc, `"creator":"0x`, `"creator":"1x`, 1), ErrInvalidWallet},
		{"bad slicing", strings.Replace(enc, `"k_verifier":2`, `"k_verifier":9`, 1), ErrInvalidSlicing},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Decode([]byte(tc.in)); !errors.Is(err, tc.want) {
				t.Fatalf("Decode = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestDecodeKeepsExpiredJobs(t *testing.T) {
	// Deadlines are checked against a clock only on submission; a stored job
	// stays readable after it expires.
	j := validJob()
	j.Deadline = 1
	if _, err := Decode(j.Encode()); err != nil {
		t.Fatalf("Decode of an expired job: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(validJob().Encode())
	j := validJob()
	j.Requirements.ModelCIDs = nil
	j.Requirements.GPUModel = ""
	j.Output = Output{Kind: OutputConcat}
	f.Add(j.Encode())
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":2}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := Decode(in)
		if err != nil {
			return
		}
		// Accepted input is canonical: decode∘encode is the identity and the
		// ID is the hash of exactly these bytes.
		if !bytes.Equal(got.Encode(), in) {
			t.Fatalf("accepted non-canonical input %q", in)
		}
		if got.ID() != sha256.Sum256(in) {
			t.Fatal("ID differs from SHA-256 of input")
		}
		if errs := got.validateStatic(); len(errs) > 0 {
			t.Fatalf("accepted invalid job: %v", errs)
		}
		if got.NumBlocks() > 1<<16 {
			return // keep each fuzz run fast; the bounds test covers large plans
		}
		if _, err := Slice(got); err != nil {
			t.Fatalf("decoded job does not slice: %v", err)
		}
	})
}
