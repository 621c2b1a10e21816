package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	uio "github.com/ipfs/boxo/ipld/unixfs/io"
	"github.com/ipfs/go-cid"
	ipld "github.com/ipfs/go-ipld-format"
)

// ipfsFetcher serves ipfs://CID[/path] through the caller's IPFS.
type ipfsFetcher struct {
	ipfs IPFS
}

var _ Fetcher = (*ipfsFetcher)(nil)

func (f *ipfsFetcher) Fetch(ctx context.Context, uri string, limit int64) (io.ReadCloser, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "ipfs" || u.User != nil || u.Port() != "" || u.RawQuery != "" {
		return nil, fmt.Errorf("%w: want ipfs://CID[/path]: %q", ErrInvalidURI, uri)
	}
	c, err := cid.Decode(u.Host)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrInvalidURI, u.Host, err)
	}
	var segments []string
	for s := range strings.SplitSeq(u.Path, "/") {
		if s != "" {
			segments = append(segments, s)
		}
	}
	if len(segments) > 0 {
		res, ok := f.ipfs.(PathResolver)
		if !ok {
			return nil, fmt.Errorf("%w: this IPFS cannot resolve paths (%s)", ErrUnsupportedScheme, u.Path)
		}
		if c, err = res.ResolvePath(ctx, c, segments); err != nil {
			return nil, mapIPFSError(err)
		}
	}
	rc, err := f.ipfs.Cat(ctx, c)
	if err != nil {
		return nil, mapIPFSError(err)
	}
	// UnixFS readers know the file size up front.
	if s, ok := rc.(interface{ Size() uint64 }); ok && s.Size() > uint64(limit) {
		rc.Close()
		return nil, fmt.Errorf("%w: %d bytes > %d", ErrTooLarge, s.Size(), limit)
	}
	return rc, nil
}

func mapIPFSError(err error) error {
	if ipld.IsNotFound(err) {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err // classified by the Registry
}

// UnixFS is an IPFS over any DAG service: the node passes its boxo DAG
// service (blockservice over bitswap); tests pass one over an in-memory
// blockstore. It reads UnixFS files and resolves paths through UnixFS
// directories (basic and HAMT-sharded).
type UnixFS struct {
	dag ipld.DAGService
}

var (
	_ IPFS         = (*UnixFS)(nil)
	_ PathResolver = (*UnixFS)(nil)
)

// NewUnixFS returns a UnixFS reading through dag.
func NewUnixFS(dag ipld.DAGService) *UnixFS { return &UnixFS{dag: dag} }

// Cat opens the UnixFS file (or raw block) c. The reader has a Size method.
func (u *UnixFS) Cat(ctx context.Context, c cid.Cid) (io.ReadCloser, error) {
	nd, err := u.dag.Get(ctx, c)
	if err != nil {
		return nil, err
	}
	r, err := uio.NewDagReader(ctx, nd, u.dag)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not a UnixFS file: %w", ErrBadResponse, c, err)
	}
	return r, nil
}

// ResolvePath walks segments from root through UnixFS directories.
func (u *UnixFS) ResolvePath(ctx context.Context, root cid.Cid, segments []string) (cid.Cid, error) {
	cur := root
	for _, name := range segments {
		nd, err := u.dag.Get(ctx, cur)
		if err != nil {
			return cid.Undef, err
		}
		dir, err := uio.NewDirectoryFromNode(u.dag, nd)
		if err != nil {
			return cid.Undef, fmt.Errorf("%w: %s is not a directory", ErrNotFound, cur)
		}
		child, err := dir.Find(ctx, name)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) || ipld.IsNotFound(err) {
				return cid.Undef, fmt.Errorf("%w: %q in %s", ErrNotFound, name, cur)
			}
			return cid.Undef, err
		}
		cur = child.Cid()
	}
	return cur, nil
}
