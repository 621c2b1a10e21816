package dapp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/jobmesh/jobmesh/fetch"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/wasm"
)

// ErrBadModule: a job's code is not a module the sandbox can run (it is
// not WebAssembly, does not compile, has no _start export or imports what
// the sandbox does not provide). Nothing was published.
var ErrBadModule = errors.New("dapp: the code is not a runnable module")

// CheckCode reads the code uri names once, through the fetcher and within
// the processors' code size limit, checks it against want when want is
// not zero (fetch.ErrHashMismatch), and checks that the sandbox can run it
// (wasm.Check; ErrBadModule, whose message gives the reason). It returns
// the code's source, pinned by its SHA-256.
func (c *Client) CheckCode(ctx context.Context, uri string, want jobs.Hash) (jobs.Source, error) {
	if err := jobs.ValidateURI(uri); err != nil {
		return jobs.Source{}, err
	}
	var buf bytes.Buffer
	if _, err := c.readContent(ctx, "code", uri, c.p.MaxCodeSize, &buf); err != nil {
		return jobs.Source{}, err
	}
	src := jobs.Source{URI: uri, SHA256: sha256.Sum256(buf.Bytes())}
	if !want.IsZero() && src.SHA256 != want {
		return src, fmt.Errorf("%w: %s has SHA-256 %s, not %s", fetch.ErrHashMismatch, uri, src.SHA256, want)
	}
	if err := wasm.Check(ctx, buf.Bytes()); err != nil {
		if ce, ok := errors.AsType[*wasm.CheckError](err); ok {
			return src, fmt.Errorf("%w: %s: %s", ErrBadModule, uri, ce.Reason)
		}
		return src, fmt.Errorf("dapp: checking the module %s: %w", uri, err)
	}
	return src, nil
}
