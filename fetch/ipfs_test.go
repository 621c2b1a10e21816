package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"testing"

	"github.com/ipfs/boxo/blockservice"
	"github.com/ipfs/boxo/blockstore"
	chunker "github.com/ipfs/boxo/chunker"
	offline "github.com/ipfs/boxo/exchange/offline"
	"github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/boxo/ipld/unixfs/importer"
	uio "github.com/ipfs/boxo/ipld/unixfs/io"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	dssync "github.com/ipfs/go-datastore/sync"
	ipld "github.com/ipfs/go-ipld-format"
	"github.com/multiformats/go-multihash"
)

// memDAG is a real boxo DAG service over an in-memory blockstore with no
// network exchange.
func memDAG() ipld.DAGService {
	bs := blockstore.NewBlockstore(dssync.MutexWrap(ds.NewMapDatastore()))
	return merkledag.NewDAGService(blockservice.New(bs, offline.Exchange(bs)))
}

// addFile imports content with the UnixFS importer in 16 KiB chunks, so a
// file spans many blocks.
func addFile(t *testing.T, dag ipld.DAGService, content []byte) ipld.Node {
	t.Helper()
	nd, err := importer.BuildDagFromReader(dag, chunker.NewSizeSplitter(bytes.NewReader(content), 16<<10))
	if err != nil {
		t.Fatal(err)
	}
	return nd
}

// addDir stores a UnixFS directory holding the given children.
func addDir(t *testing.T, dag ipld.DAGService, children map[string]ipld.Node) ipld.Node {
	t.Helper()
	ctx := context.Background()
	dir, err := uio.NewDirectory(dag)
	if err != nil {
		t.Fatal(err)
	}
	for name, nd := range children {
		if err := dir.AddChild(ctx, name, nd); err != nil {
			t.Fatal(err)
		}
	}
	nd, err := dir.GetNode()
	if err != nil {
		t.Fatal(err)
	}
	if err := dag.Add(ctx, nd); err != nil {
		t.Fatal(err)
	}
	return nd
}

// catOnly hides the PathResolver of an IPFS.
type catOnly struct{ IPFS }

func TestIPFSFetcher(t *testing.T) {
	dag := memDAG()
	content := testData(300_000)
	sum := sha256.Sum256(content)
	file := addFile(t, dag, content)
	small := addFile(t, dag, []byte("model weights"))
	sub := addDir(t, dag, map[string]ipld.Node{"weights.bin": small})
	root := addDir(t, dag, map[string]ipld.Node{"input.bin": file, "models": sub})
	if len(file.Links()) < 2 {
		t.Fatalf("test file has %d links; want a multi-block file", len(file.Links()))
	}
	r := newTestRegistry(t, func(c *Config) { c.IPFS = NewUnixFS(dag) })
	ctx := context.Background()

	got, err := r.FetchVerified(ctx, "ipfs://"+file.Cid().String(), sum, int64(len(content)))
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("ipfs://CID: %d bytes, %v", len(got), err)
	}
	got, err = r.FetchVerified(ctx, "ipfs://"+root.Cid().String()+"/input.bin", sum, int64(len(content)))
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("ipfs://CID/path: %v", err)
	}
	got, err = r.FetchVerified(ctx, "ipfs://"+root.Cid().String()+"/models/weights.bin", sha256.Sum256([]byte("model weights")), 100)
	if err != nil || string(got) != "model weights" {
		t.Fatalf("nested path: %q, %v", got, err)
	}
	// UnixFS knows the size: an oversized file fails before any block is read.
	if _, err := r.Fetch(ctx, "ipfs://"+file.Cid().String(), int64(len(content))-1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over limit: %v", err)
	}

	absent, err := cid.V1Builder{Codec: cid.Raw, MhType: multihash.SHA2_256}.Sum([]byte("not stored"))
	if err != nil {
		t.Fatal(err)
	}
	for uri, want := range map[string]error{
		"ipfs://" + absent.String():                         ErrNotFound,
		"ipfs://" + root.Cid().String() + "/nope":           ErrNotFound,
		"ipfs://" + root.Cid().String() + "/input.bin/deep": ErrNotFound, // a file is not a directory
		"ipfs://" + root.Cid().String():                     ErrBadResponse,
		"ipfs://not-a-cid":                                  ErrInvalidURI,
	} {
		if _, err := r.Fetch(ctx, uri, 1<<20); !errors.Is(err, want) {
			t.Errorf("Fetch(%q) = %v, want %v", uri, err, want)
		}
	}

	// An IPFS without path resolution serves bare CIDs only.
	plain := newTestRegistry(t, func(c *Config) { c.IPFS = catOnly{NewUnixFS(dag)} })
	if _, err := plain.Fetch(ctx, "ipfs://"+root.Cid().String()+"/input.bin", 1<<20); !errors.Is(err, ErrUnsupportedScheme) {
		t.Fatalf("path without resolver: %v", err)
	}
	rc, err := plain.Fetch(ctx, "ipfs://"+small.Cid().String(), 100)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if b, err := io.ReadAll(rc); err != nil || string(b) != "model weights" {
		t.Fatalf("bare CID without resolver: %q, %v", b, err)
	}
}
