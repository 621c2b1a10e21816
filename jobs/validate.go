package jobs

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/ipfs/go-cid"
)

// Validate checks every field and returns one error per bad field, joined
// with errors.Join; each wraps a sentinel (ErrInvalidURI, ErrInvalidSlicing,
// ...). now is the reference for the deadline: a job whose deadline is not
// after now is rejected. Validate does not apply defaults.
func (j *JobInfo) Validate(now time.Time) error {
	errs := j.validateStatic()
	if j.Deadline > 0 && j.Deadline <= now.Unix() {
		errs = append(errs, fmt.Errorf("deadline: %w: %d is not after now (%d)", ErrInvalidDeadline, j.Deadline, now.Unix()))
	}
	return errors.Join(errs...)
}

// validateStatic checks everything that does not depend on the clock. The
// decoder uses it: an old job stays decodable after its deadline.
func (j *JobInfo) validateStatic() []error {
	var errs fieldErrors
	add := errs.add
	if j.Version != SchemaVersion {
		add("version", ErrUnsupportedVersion, "%d (want %d)", j.Version, SchemaVersion)
	}
	if err := ValidateURI(j.Code.URI); err != nil {
		errs = append(errs, fmt.Errorf("code.uri: %w", err))
	}
	if j.Code.SHA256.IsZero() {
		add("code.sha256", ErrInvalidHash, "missing")
	}
	if err := ValidateURI(j.Data.URI); err != nil {
		errs = append(errs, fmt.Errorf("data.uri: %w", err))
	}
	if j.Data.SHA256.IsZero() {
		add("data.sha256", ErrInvalidHash, "missing")
	}
	if j.Data.Size == 0 {
		add("data.size", ErrInvalidSlicing, "must be at least 1 byte")
	}

	j.validateSlicing(&errs)
	if j.SeedCommitment.IsZero() {
		add("seed_commitment", ErrMissingSeed, "must be keccak256 of 32 random bytes, not zero")
	}
	switch {
	case j.PriceWei == nil:
		add("price_wei", ErrInvalidPrice, "missing")
	case j.PriceWei.Sign() <= 0:
		add("price_wei", ErrInvalidPrice, "%s must be positive", j.PriceWei)
	case j.PriceWei.Cmp(maxPrice) > 0:
		add("price_wei", ErrInvalidPrice, "exceeds 2^256-1")
	}

	j.validateRequirements(&errs)
	if j.Creator == (Address{}) {
		add("creator", ErrInvalidWallet, "zero address")
	}
	if j.Deadline <= 0 || j.Deadline > MaxDeadline {
		add("deadline", ErrInvalidDeadline, "%d not in 1..%d", j.Deadline, int64(MaxDeadline))
	}

	switch j.Output.Kind {
	case OutputConcat:
		if j.Output.Columns != 0 {
			add("output.columns", ErrInvalidOutput, "must be 0 for %q", OutputConcat)
		}
	case OutputPNGGrid:
		if j.Output.Columns < 1 || j.Output.Columns > MaxColumns {
			add("output.columns", ErrInvalidOutput, "%d not in 1..%d", j.Output.Columns, MaxColumns)
		}
	default:
		add("output.kind", ErrInvalidOutput, "%q (want %q or %q)", j.Output.Kind, OutputConcat, OutputPNGGrid)
	}
	if j.TaskSize > MaxTaskSize {
		add("task_size", ErrInvalidTaskSize, "%d exceeds 2^53", j.TaskSize)
	}
	j.validateLimits(add)
	return errs
}

// fieldErrors collects validation errors, each naming its field.
type fieldErrors []error

func (e *fieldErrors) add(field string, sentinel error, format string, args ...any) {
	*e = append(*e, fmt.Errorf("%s: %w: %s", field, sentinel, fmt.Sprintf(format, args...)))
}

// validateSlicing checks the slicing parameters and the block and
// MicroJob counts they give.
func (j *JobInfo) validateSlicing(errs *fieldErrors) {
	add := errs.add
	s := j.Slicing
	if s.BlockSize < MinBlockSize || s.BlockSize > MaxBlockSize {
		add("slicing.block_size", ErrInvalidSlicing, "%d not in %d..%d", s.BlockSize, MinBlockSize, MaxBlockSize)
	} else if n := j.NumBlocks(); n > MaxBlocks {
		add("slicing.block_size", ErrInvalidSlicing, "%d blocks exceed the limit of %d; use larger blocks", n, MaxBlocks)
	}
	if s.MicroJobs < 1 || s.MicroJobs > MaxMicroJobsPerMacro {
		add("slicing.n", ErrInvalidSlicing, "%d not in 1..%d", s.MicroJobs, MaxMicroJobsPerMacro)
	}
	if s.BlocksPerMicro < 1 || s.BlocksPerMicro > MaxBlocksPerMicro {
		add("slicing.k", ErrInvalidSlicing, "%d not in 1..%d", s.BlocksPerMicro, MaxBlocksPerMicro)
	}
	if s.BlockSize >= MinBlockSize && s.BlocksPerMicro >= 1 {
		if m := ceilDiv(j.NumBlocks(), uint64(s.BlocksPerMicro)); m > MaxMicroJobs {
			add("slicing.k", ErrInvalidSlicing, "%d MicroJobs exceed the limit of %d; use larger blocks or a larger K", m, MaxMicroJobs)
		}
	}
	if s.VerifierBlocks < 1 || s.VerifierBlocks > s.MicroJobs {
		// One verifier block per distinct regular MicroJob, so K' <= N.
		add("slicing.k_verifier", ErrInvalidSlicing, "%d not in 1..N (N=%d)", s.VerifierBlocks, s.MicroJobs)
	}
}

// validateRequirements checks what the job asks of its processors.
func (j *JobInfo) validateRequirements(errs *fieldErrors) {
	add := errs.add
	r := j.Requirements
	if r.MinVRAMMiB > MaxMinVRAMMiB {
		add("requirements.min_vram_mib", ErrInvalidRequirements, "%d exceeds %d", r.MinVRAMMiB, MaxMinVRAMMiB)
	}
	if err := validateText(r.GPUModel, MaxGPUModelLength, true); err != nil {
		add("requirements.gpu_model", ErrInvalidRequirements, "%v", err)
	}
	if len(r.ModelCIDs) > MaxModelCIDs {
		add("requirements.model_cids", ErrInvalidRequirements, "%d entries exceed %d", len(r.ModelCIDs), MaxModelCIDs)
	}
	seen := make(map[string]bool, len(r.ModelCIDs))
	for i, s := range r.ModelCIDs {
		if err := validateCID(s); err != nil {
			add(fmt.Sprintf("requirements.model_cids[%d]", i), ErrInvalidRequirements, "%v", err)
		} else if seen[s] {
			add(fmt.Sprintf("requirements.model_cids[%d]", i), ErrInvalidRequirements, "duplicate %s", s)
		}
		seen[s] = true
	}
	if r.Replicas < 1 || r.Replicas > MaxReplicas {
		add("requirements.replicas", ErrInvalidRequirements, "%d not in 1..%d", r.Replicas, MaxReplicas)
	} else if n := uint64(j.Slicing.MicroJobs); n >= 1 && n <= MaxMicroJobsPerMacro && (n+1)*uint64(r.Replicas) > MaxQueueItems {
		add("requirements.replicas", ErrInvalidRequirements, "%d replicas of %d MicroJobs per MacroJob (with the verifier) make %d queue items, at most %d", r.Replicas, n+1, (n+1)*uint64(r.Replicas), MaxQueueItems)
	}
}

// Schemes a JobInfo may name for code and data.
var supportedSchemes = map[string]bool{
	"ipfs": true, "https": true, "http": true, "sftp": true, "ws": true, "wss": true, "file": true,
}

// ValidateURI checks that s is a URI jobmesh can fetch: a supported scheme
// and the parts that scheme needs. Characters are limited to printable ASCII
// without '"' and '\', so the canonical encoding never escapes them.
func ValidateURI(s string) error {
	if s == "" {
		return fmt.Errorf("%w: empty", ErrInvalidURI)
	}
	if len(s) > MaxURILength {
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidURI, MaxURILength)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return fmt.Errorf("%w: byte 0x%02x at %d not allowed", ErrInvalidURI, c, i)
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidURI, err)
	}
	if !supportedSchemes[u.Scheme] {
		return fmt.Errorf("%w: unsupported scheme %q", ErrInvalidURI, u.Scheme)
	}
	if u.Fragment != "" || strings.Contains(s, "#") {
		return fmt.Errorf("%w: fragments are not allowed", ErrInvalidURI)
	}
	if u.Opaque != "" {
		return fmt.Errorf("%w: %s URI must have the form %s://<address>", ErrInvalidURI, u.Scheme, u.Scheme)
	}
	switch u.Scheme {
	case "ipfs":
		if u.User != nil || u.Port() != "" || u.RawQuery != "" {
			return fmt.Errorf("%w: ipfs URI must be ipfs://CID[/path]", ErrInvalidURI)
		}
		if err := validateCID(u.Host); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidURI, err)
		}
	case "https", "http", "ws", "wss":
		if u.Hostname() == "" {
			return fmt.Errorf("%w: missing host", ErrInvalidURI)
		}
	case "sftp":
		if u.User == nil || u.User.Username() == "" {
			return fmt.Errorf("%w: sftp URI needs a user (sftp://user@host:port/path)", ErrInvalidURI)
		}
		if _, hasPass := u.User.Password(); hasPass {
			return fmt.Errorf("%w: sftp URI must not carry a password", ErrInvalidURI)
		}
		if u.Hostname() == "" || u.Path == "" || u.Path == "/" {
			return fmt.Errorf("%w: sftp URI needs a host and a path", ErrInvalidURI)
		}
	case "file":
		if u.Host != "" || u.User != nil || u.Path == "" || u.RawQuery != "" {
			return fmt.Errorf("%w: file URI must be file:///absolute/path", ErrInvalidURI)
		}
	}
	return nil
}

// validateCID accepts only a CID in its canonical string form, so one model
// or file has one spelling and one job ID.
func validateCID(s string) error {
	c, err := cid.Decode(s)
	if err != nil {
		return fmt.Errorf("bad CID %q: %v", s, err)
	}
	if c.String() != s {
		return fmt.Errorf("CID %q is not in canonical form %q", s, c.String())
	}
	return nil
}

// validateText accepts printable ASCII without '"' and '\' and without
// surrounding spaces.
func validateText(s string, maxLen int, allowEmpty bool) error {
	if s == "" {
		if allowEmpty {
			return nil
		}
		return errors.New("empty")
	}
	if len(s) > maxLen {
		return fmt.Errorf("longer than %d bytes", maxLen)
	}
	if strings.TrimSpace(s) != s {
		return errors.New("leading or trailing space")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return fmt.Errorf("byte 0x%02x at %d not allowed", c, i)
		}
	}
	return nil
}

// ParseAddress parses an EVM address: "0x" and 40 hex digits. All-lowercase
// and all-uppercase digits are accepted; mixed case must carry a valid
// EIP-55 checksum, which catches typos.
func ParseAddress(s string) (Address, error) {
	var a Address
	if len(s) != 42 || (s[:2] != "0x" && s[:2] != "0X") {
		return a, fmt.Errorf("%w: want 0x and 40 hex digits", ErrInvalidWallet)
	}
	digits := s[2:]
	if _, err := hex.Decode(a[:], []byte(digits)); err != nil {
		return Address{}, fmt.Errorf("%w: %v", ErrInvalidWallet, err)
	}
	if digits != strings.ToLower(digits) && digits != strings.ToUpper(digits) {
		if want := a.Checksummed(); want[2:] != digits {
			return Address{}, fmt.Errorf("%w: bad EIP-55 checksum (want %s)", ErrInvalidWallet, want)
		}
	}
	return a, nil
}
