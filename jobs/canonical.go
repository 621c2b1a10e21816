package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
)

// MaxEncodedSize bounds an encoded JobInfo. The field bounds keep a valid
// job far below it (about 8 KiB at most).
const MaxEncodedSize = 64 << 10

// Encode returns the canonical encoding: JSON with the fields in the fixed
// order of docs (PROTOCOL), no whitespace, integers in shortest decimal form,
// hashes as lowercase hex, the price as a decimal string, every field present.
// Valid JobInfo strings never need escaping; invalid ones are escaped so the
// output is still JSON (and is then rejected by Decode).
func (j *JobInfo) Encode() []byte {
	b := make([]byte, 0, 512)
	b = append(b, `{"version":`...)
	b = strconv.AppendUint(b, uint64(j.Version), 10)
	b = append(b, `,"code":{"uri":`...)
	b = appendString(b, j.Code.URI)
	b = append(b, `,"sha256":"`...)
	b = append(b, j.Code.SHA256.String()...)
	b = append(b, `"},"data":{"uri":`...)
	b = appendString(b, j.Data.URI)
	b = append(b, `,"sha256":"`...)
	b = append(b, j.Data.SHA256.String()...)
	b = append(b, `","size":`...)
	b = strconv.AppendUint(b, j.Data.Size, 10)
	b = append(b, `},"slicing":{"block_size":`...)
	b = strconv.AppendUint(b, j.Slicing.BlockSize, 10)
	b = append(b, `,"n":`...)
	b = strconv.AppendUint(b, uint64(j.Slicing.MicroJobs), 10)
	b = append(b, `,"k":`...)
	b = strconv.AppendUint(b, uint64(j.Slicing.BlocksPerMicro), 10)
	b = append(b, `,"k_verifier":`...)
	b = strconv.AppendUint(b, uint64(j.Slicing.VerifierBlocks), 10)
	b = append(b, `},"seed_commitment":"`...)
	b = append(b, j.SeedCommitment.String()...)
	b = append(b, `","price_wei":"`...)
	if j.PriceWei != nil {
		b = j.PriceWei.Append(b, 10)
	}
	b = append(b, `","requirements":{"min_vram_mib":`...)
	b = strconv.AppendUint(b, j.Requirements.MinVRAMMiB, 10)
	b = append(b, `,"gpu_model":`...)
	b = appendString(b, j.Requirements.GPUModel)
	b = append(b, `,"model_cids":[`...)
	for i, c := range j.Requirements.ModelCIDs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, c)
	}
	b = append(b, `],"replicas":`...)
	b = strconv.AppendUint(b, uint64(j.Requirements.Replicas), 10)
	b = append(b, `},"creator":"`...)
	b = append(b, j.Creator.String()...)
	b = append(b, `","deadline":`...)
	b = strconv.AppendInt(b, j.Deadline, 10)
	b = append(b, `,"output":{"kind":`...)
	b = appendString(b, j.Output.Kind)
	b = append(b, `,"columns":`...)
	b = strconv.AppendUint(b, uint64(j.Output.Columns), 10)
	b = append(b, `},"task_size":`...)
	b = strconv.AppendUint(b, j.TaskSize, 10)
	b = appendLimits(b, j.Limits)
	b = append(b, '}')
	return b
}

// appendString writes s as a JSON string. Bytes outside printable ASCII, '"'
// and '\' become \u00XX; validation forbids them, so this only keeps the
// output well-formed for invalid input.
func appendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			continue
		}
		b = append(b, c)
	}
	return append(b, '"')
}

// wire mirrors the canonical JSON for decoding.
type wire struct {
	Version uint32 `json:"version"`
	Code    struct {
		URI    string `json:"uri"`
		SHA256 string `json:"sha256"`
	} `json:"code"`
	Data struct {
		URI    string `json:"uri"`
		SHA256 string `json:"sha256"`
		Size   uint64 `json:"size"`
	} `json:"data"`
	Slicing struct {
		BlockSize uint64 `json:"block_size"`
		N         uint32 `json:"n"`
		K         uint32 `json:"k"`
		KVerifier uint32 `json:"k_verifier"`
	} `json:"slicing"`
	SeedCommitment string `json:"seed_commitment"`
	PriceWei       string `json:"price_wei"`
	Requirements   struct {
		MinVRAMMiB uint64   `json:"min_vram_mib"`
		GPUModel   string   `json:"gpu_model"`
		ModelCIDs  []string `json:"model_cids"`
		Replicas   uint32   `json:"replicas"`
	} `json:"requirements"`
	Creator  string `json:"creator"`
	Deadline int64  `json:"deadline"`
	Output   struct {
		Kind    string `json:"kind"`
		Columns uint32 `json:"columns"`
	} `json:"output"`
	TaskSize uint64      `json:"task_size"`
	Limits   *wireLimits `json:"limits"`
}

// Decode parses a canonical encoding. It rejects input larger than
// MaxEncodedSize (ErrTooLarge), another schema version
// (ErrUnsupportedVersion), malformed JSON (ErrMalformed), invalid fields (the
// Validate sentinels, deadline not checked against the clock) and any input
// that is not byte-for-byte the canonical encoding of the result
// (ErrNonCanonical). So Decode(b) succeeds only when Encode(Decode(b)) == b,
// and a job ID cannot be changed by re-spelling its JobInfo.
func Decode(b []byte) (*JobInfo, error) {
	if len(b) > MaxEncodedSize {
		return nil, fmt.Errorf("%w: %d bytes > %d", ErrTooLarge, len(b), MaxEncodedSize)
	}
	// The version is read first and alone: another version's schema may not
	// fit this one.
	var v struct {
		Version *uint32 `json:"version"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if v.Version == nil {
		return nil, fmt.Errorf("%w: missing version", ErrMalformed)
	}
	if *v.Version != SchemaVersion {
		return nil, fmt.Errorf("%w: %d (want %d)", ErrUnsupportedVersion, *v.Version, SchemaVersion)
	}

	var w wire
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	j := &JobInfo{
		Version: w.Version,
		Code:    Source{URI: w.Code.URI},
		Data:    Data{Source: Source{URI: w.Data.URI}, Size: w.Data.Size},
		Slicing: Slicing{
			BlockSize:      w.Slicing.BlockSize,
			MicroJobs:      w.Slicing.N,
			BlocksPerMicro: w.Slicing.K,
			VerifierBlocks: w.Slicing.KVerifier,
		},
		Requirements: Requirements{
			MinVRAMMiB: w.Requirements.MinVRAMMiB,
			GPUModel:   w.Requirements.GPUModel,
			ModelCIDs:  w.Requirements.ModelCIDs,
			Replicas:   w.Requirements.Replicas,
		},
		Deadline: w.Deadline,
		Output:   Output{Kind: w.Output.Kind, Columns: w.Output.Columns},
		TaskSize: w.TaskSize,
		Limits:   w.Limits.limits(),
	}
	var errs []error
	parseHash := func(field, s string, sentinel error, dst *Hash) {
		h, err := ParseHash(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w: %v", field, sentinel, err))
			return
		}
		*dst = h
	}
	parseHash("code.sha256", w.Code.SHA256, ErrInvalidHash, &j.Code.SHA256)
	parseHash("data.sha256", w.Data.SHA256, ErrInvalidHash, &j.Data.SHA256)
	parseHash("seed_commitment", w.SeedCommitment, ErrMissingSeed, &j.SeedCommitment)
	if p, ok := new(big.Int).SetString(w.PriceWei, 10); ok {
		j.PriceWei = p
	} else {
		errs = append(errs, fmt.Errorf("price_wei: %w: %q is not a decimal integer", ErrInvalidPrice, w.PriceWei))
	}
	if a, err := ParseAddress(w.Creator); err == nil {
		j.Creator = a
	} else {
		errs = append(errs, fmt.Errorf("creator: %w", err))
	}
	if len(errs) == 0 {
		errs = j.validateStatic()
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if !bytes.Equal(j.Encode(), b) {
		return nil, ErrNonCanonical
	}
	return j, nil
}
