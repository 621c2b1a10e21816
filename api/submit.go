package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/fetch"
	"github.com/jobmesh/jobmesh/internal/strictjson"
	"github.com/jobmesh/jobmesh/jobs"
)

// MaxSubmitBody bounds the JSON body of POST /v1/jobs.
const MaxSubmitBody = 1 << 20

// DefaultDeadline is a submitted job's deadline when the request names
// none.
const DefaultDeadline = time.Hour

// submitter serves the submitting side of the API through the node's DApp
// client.
type submitter struct {
	client    *dapp.Client // nil on a node that does not submit
	role      string
	view      *JobView
	maxUpload int64
}

// dapp returns the node's DApp client, or answers 501 on a node that
// cannot submit (a bootstrap node).
func (s *submitter) dapp(w http.ResponseWriter) *dapp.Client {
	if s.client == nil {
		writeError(w, http.StatusNotImplemented, fmt.Errorf("this node (role %s) does not submit jobs; use a client or processor node", s.role))
	}
	return s.client
}

func contentType(r *http.Request, want string) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return fmt.Errorf("missing Content-Type, want %s", want)
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != want {
		return fmt.Errorf("Content-Type %q, want %s", ct, want)
	}
	return nil
}

// content adds the raw body to the node's block layer as UnixFS. The body
// is staged (dapp.Client.AddChecked) and imported only once it has
// arrived whole, within the limit: a refused upload (too large, empty,
// client gone) leaves nothing on disk. Added content is pinned as an
// upload.
func (s *submitter) content(w http.ResponseWriter, r *http.Request) {
	c := s.dapp(w)
	if c == nil {
		return
	}
	if err := contentType(r, "application/octet-stream"); err != nil {
		writeError(w, http.StatusUnsupportedMediaType, err)
		return
	}
	if r.ContentLength > s.maxUpload {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Errorf("content of %d bytes exceeds the limit of %d bytes", r.ContentLength, s.maxUpload))
		return
	}
	body := http.MaxBytesReader(w, r.Body, s.maxUpload)
	h := sha256.New()
	cr := &countingReader{r: io.TeeReader(body, h)}
	k, err := c.AddChecked(r.Context(), cr, func(size int64) error {
		if size == 0 {
			return errEmptyContent
		}
		// The client may have gone while its last bytes were read.
		return r.Context().Err()
	})
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Errorf("content exceeds the limit of %d bytes", s.maxUpload))
		return
	case errors.Is(err, errEmptyContent):
		writeError(w, http.StatusBadRequest, errEmptyContent)
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusCreated, apiv1.Content{
		CID: k.String(), URI: "ipfs://" + k.String(), SHA256: hex.EncodeToString(h.Sum(nil)), Size: uint64(cr.n),
	})
}

var errEmptyContent = errors.New("empty content")

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// submit publishes a job whose code and data are named by URI.
func (s *submitter) submit(w http.ResponseWriter, r *http.Request) {
	c, spec, ok := s.prepare(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	info, err := c.SubmitSource(ctx, spec)
	switch {
	case errors.Is(err, dapp.ErrInvalidJob):
		writeError(w, http.StatusBadRequest, fieldErrors(err))
		return
	case errors.Is(err, dapp.ErrInsufficientFunds):
		writeError(w, http.StatusPaymentRequired, err)
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	j, err := s.view.Summary(ctx, info.ID())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusCreated, j)
}

// prepare reads and checks a submit request: its fields, then its code
// (a module the sandbox can run) and data (sized), each read once
// through the fetchers processors use and checked against the hash it
// was given. Not ok: it has answered the request.
func (s *submitter) prepare(w http.ResponseWriter, r *http.Request) (*dapp.Client, dapp.SourceSpec, bool) {
	c := s.dapp(w)
	if c == nil {
		return nil, dapp.SourceSpec{}, false
	}
	if err := contentType(r, "application/json"); err != nil {
		writeError(w, http.StatusUnsupportedMediaType, err)
		return nil, dapp.SourceSpec{}, false
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxSubmitBody+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("reading the body: %w", err))
		return nil, dapp.SourceSpec{}, false
	}
	var req apiv1.SubmitRequest
	if err := strictjson.Decode(b, MaxSubmitBody, &req); err != nil {
		status := http.StatusBadRequest
		if errors.Is(err, strictjson.ErrTooLarge) {
			status = http.StatusRequestEntityTooLarge
		}
		writeError(w, status, fmt.Errorf("request body: %w", err))
		return nil, dapp.SourceSpec{}, false
	}
	spec, err := specOf(req, time.Now())
	if err != nil {
		writeError(w, http.StatusBadRequest, fieldErrors(err))
		return nil, dapp.SourceSpec{}, false
	}
	ctx := r.Context()
	if req.FetchTimeoutS > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.FetchTimeoutS)*time.Second)
		defer cancel()
	}
	if spec.Code, err = c.CheckCode(ctx, spec.Code.URI, spec.Code.SHA256); err != nil {
		writeFetchError(w, "code", err)
		return nil, dapp.SourceSpec{}, false
	}
	if spec.Data, err = c.DescribeData(ctx, spec.Data.URI, spec.Data.SHA256); err != nil {
		writeFetchError(w, "data", err)
		return nil, dapp.SourceSpec{}, false
	}
	return c, spec, true
}

// cancel withdraws a job this node submitted, before work has started.
func (s *submitter) cancel(w http.ResponseWriter, r *http.Request) {
	id, err := jobs.ParseHash(r.PathValue("id"))
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("job ID: %w", err))
		return
	}
	ctx := r.Context()
	if _, err := s.view.Summary(ctx, id); errors.Is(err, ErrNoSuchJob) {
		writeError(w, http.StatusNotFound, err)
		return
	} else if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	c := s.dapp(w)
	if c == nil {
		return
	}
	err = c.Cancel(ctx, id)
	switch {
	case errors.Is(err, dapp.ErrNotMine), errors.Is(err, dapp.ErrNoSigner):
		writeError(w, http.StatusForbidden, err)
		return
	case errors.Is(err, dapp.ErrStarted):
		writeError(w, http.StatusConflict, err)
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	j, err := s.view.Summary(ctx, id)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusOK, j)
}

// writeFetchError answers a failed read of a job's code or data: a URI
// the node cannot use is a bad request (400); content it cannot read,
// that is too large or does not match its hash, and code the sandbox
// cannot run (dapp.ErrBadModule), is 422; content not read within the
// request's fetch_timeout_s is 504. Nothing was
// published either way.
func writeFetchError(w http.ResponseWriter, field string, err error) {
	status := http.StatusUnprocessableEntity
	if errors.Is(err, fetch.ErrInvalidURI) || errors.Is(err, fetch.ErrUnsupportedScheme) || errors.Is(err, jobs.ErrInvalidURI) {
		status = http.StatusBadRequest
	}
	if errors.Is(err, dapp.ErrNoFetch) {
		status = http.StatusBadRequest
	}
	if errors.Is(err, dapp.ErrContentTimeout) {
		status = http.StatusGatewayTimeout
	}
	writeError(w, status, fmt.Errorf("%s.uri: %w", field, err))
}

// fieldErrors flattens a validation error, one line per bad field, into
// one message.
func fieldErrors(err error) error {
	return errors.New(strings.ReplaceAll(err.Error(), "\n", "; "))
}

// specOf checks a request's fields, each with its own error, and turns it
// into a SourceSpec. Zero hashes mean "read the content to find out"; a
// zero data size is filled in by reading the data.
func specOf(req apiv1.SubmitRequest, now time.Time) (dapp.SourceSpec, error) {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	var spec dapp.SourceSpec
	hash := func(field, s string) jobs.Hash {
		if s == "" {
			return jobs.Hash{}
		}
		h, err := jobs.ParseHash(s)
		if err != nil || s != strings.ToLower(s) {
			bad(field, "want 64 lowercase hex digits, got %q", s)
		}
		return h
	}
	if err := jobs.ValidateURI(req.Code.URI); err != nil {
		bad("code.uri", "%v", err)
	}
	if err := jobs.ValidateURI(req.Data.URI); err != nil {
		bad("data.uri", "%v", err)
	}
	spec.Code = jobs.Source{URI: req.Code.URI, SHA256: hash("code.sha256", req.Code.SHA256)}
	spec.Data = jobs.Data{Source: jobs.Source{URI: req.Data.URI, SHA256: hash("data.sha256", req.Data.SHA256)}}
	switch price, ok := new(big.Int).SetString(req.PriceWei, 10); {
	case req.PriceWei == "":
		bad("price_wei", "missing")
	case !ok:
		bad("price_wei", "%q is not a decimal integer", req.PriceWei)
	case price.Sign() <= 0:
		bad("price_wei", "%s must be positive", price)
	default:
		spec.Price = price
		if err := dapp.CheckPrice(price); err != nil {
			bad("price_wei", "%v", err)
		}
	}
	if req.Slicing.BlockSize == 0 {
		bad("slicing.block_size", "missing")
	}
	spec.Slicing = jobs.Slicing{BlockSize: req.Slicing.BlockSize, MicroJobs: req.Slicing.MicroJobs,
		BlocksPerMicro: req.Slicing.BlocksPerMicro, VerifierBlocks: req.Slicing.VerifierBlocks}
	spec.Deadline = req.Deadline
	if spec.Deadline.IsZero() {
		spec.Deadline = now.Add(DefaultDeadline)
	} else if !spec.Deadline.After(now) {
		bad("deadline", "%s is not in the future", req.Deadline.Format(time.RFC3339))
	}
	switch req.Output {
	case "", jobs.OutputConcat:
		if req.Columns != 0 {
			bad("columns", "only a png-grid output has columns")
		}
		spec.Output = jobs.Output{Kind: jobs.OutputConcat}
	case jobs.OutputPNGGrid:
		if req.Columns == 0 {
			bad("columns", "a png-grid output needs columns")
		}
		spec.Output = jobs.Output{Kind: jobs.OutputPNGGrid, Columns: req.Columns}
	default:
		bad("output", "%q (want %q or %q)", req.Output, jobs.OutputConcat, jobs.OutputPNGGrid)
	}
	rq := req.Requirements
	spec.Requirements = jobs.Requirements{MinVRAMMiB: rq.MinVRAMMiB, GPUModel: rq.GPUModel, ModelCIDs: rq.ModelCIDs, Replicas: rq.Replicas}
	spec.TaskSize = req.TaskSize
	spec.Limits = jobs.Limits{BlockTimeoutS: req.Limits.BlockTimeoutS, MemoryMiB: req.Limits.MemoryMiB, OutputMiB: req.Limits.OutputMiB}
	if req.FetchTimeoutS > apiv1.MaxFetchTimeoutS {
		bad("fetch_timeout_s", "%d is over %d", req.FetchTimeoutS, apiv1.MaxFetchTimeoutS)
	}
	if len(errs) > 0 {
		return spec, errors.Join(errs...)
	}
	// The rest (slicing bounds, requirements) is checked on a provisional
	// JobInfo before any content is fetched.
	probe := &jobs.JobInfo{
		Code: jobs.Source{URI: spec.Code.URI, SHA256: jobs.Hash{1}}, Data: jobs.Data{Source: jobs.Source{URI: spec.Data.URI, SHA256: jobs.Hash{1}}, Size: 1},
		Slicing: spec.Slicing, SeedCommitment: jobs.Seed{1}, PriceWei: spec.Price, Requirements: spec.Requirements,
		Creator: jobs.Address{1}, Deadline: spec.Deadline.Unix(), Output: spec.Output, TaskSize: spec.TaskSize,
		Limits: spec.Limits,
	}
	probe.ApplyDefaults()
	if err := probe.Validate(now); err != nil {
		return spec, err
	}
	return spec, nil
}
