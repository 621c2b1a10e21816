package api_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/ipfs/boxo/blockstore"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/query"
	pebbleds "github.com/ipfs/go-ds-pebble"

	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/p2p"
)

// diskNode is a client node alone, its datastore a pebble database on
// disk, as in a repo.
type diskNode struct {
	*node.Node
	dsDir, staging string
	store          *pebbleds.Datastore
}

func newDiskNode(t *testing.T) diskNode {
	t.Helper()
	dir := t.TempDir()
	store, err := pebbleds.NewDatastore(filepath.Join(dir, node.DatastoreDir))
	if err != nil {
		t.Fatal(err)
	}
	id, err := p2p.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	cfg := node.DefaultConfig() // max_upload_mib 64
	cfg.IPFS.StagingDir = filepath.Join(dir, "staging")
	pc := p2p.LoopbackConfig()
	n, err := node.New(context.Background(), node.Params{Role: node.RoleClient, Config: cfg, Identity: id,
		Datastore: store, P2P: &pc, Logger: meshtest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close(); store.Close() })
	return diskNode{Node: n, dsDir: filepath.Join(dir, node.DatastoreDir), staging: cfg.IPFS.StagingDir, store: store}
}

// blocks returns the blocks in the node's datastore, by key, with their
// sizes: /blocks/<mh> (pins are /blocks/pins/<owner>/<cid>).
func (d diskNode) blocks(t *testing.T) map[string]int {
	t.Helper()
	res, err := d.store.Query(context.Background(), query.Query{Prefix: blockstore.BlockPrefix.String(), ReturnsSizes: true})
	if err != nil {
		t.Fatal(err)
	}
	es, err := res.Rest()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range es {
		if ds.RawKey(e.Key).Parent().String() == "/blocks" {
			out[e.Key] = e.Size
		}
	}
	return out
}

// leaked is what blocks gained over before that could be an upload's:
// the count and bytes of new blocks, and the largest. The node's own
// store writes small blocks of its own at any time (its records), so
// the test looks for content, not for a fixed key count: an upload is
// imported in ChunkSize (256 KiB) leaves.
func leaked(before, after map[string]int) (n, bytes, largest int) {
	for k, size := range after {
		if _, ok := before[k]; ok {
			continue
		}
		n++
		bytes += size
		largest = max(largest, size)
	}
	return n, bytes, largest
}

// dirUsage is the bytes and files under dir.
func dirUsage(t *testing.T, dir string) (size int64, files int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		size += info.Size()
		files++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return size, files
}

func (d diskNode) discarded(t *testing.T) float64 {
	t.Helper()
	mfs, err := d.Metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "jobmesh_ipfs_staged_discarded_total" {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// randomReader streams n pseudo-random bytes without holding them.
func randomReader(n int64, seed uint64) io.Reader {
	return io.LimitReader(rand.NewChaCha8([32]byte{byte(seed)}), n)
}

// TestRejectedUploadLeavesNothingOnDisk is issue 19's 67 MB: a chunked
// upload of 100 MB, over the 64 MiB limit, is refused with 413 and leaves
// the block store as it was: the same block keys, the datastore directory
// the same size within a little (the node's own bookkeeping), no spool
// file. So does a client that goes away half way, and an empty upload. An
// upload within the limit is stored and pinned.
func TestRejectedUploadLeavesNothingOnDisk(t *testing.T) {
	d := newDiskNode(t)
	srv, c := serve(t, d.Node)
	ctx := context.Background()
	blocks0 := d.blocks(t)
	size0, files0 := dirUsage(t, d.dsDir)

	// http.NewRequest with a plain io.Reader sends it chunked.
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/content", randomReader(100<<20, 1))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("Authorization", "Bearer "+c.Token())
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("100 MB upload: %s", resp.Status)
		}
	} // else the server closed the connection while the client was still sending
	wait.Until(t, 30*time.Second, func() error {
		if d.discarded(t) < 1 {
			return errNotYet
		}
		return nil
	})

	// A client that goes away after 10 MB. The body ends in an error, not
	// EOF: a clean end could let the transport send the last chunk before
	// the cancel lands, and the server would then hold a whole upload.
	pr, pw := io.Pipe()
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		io.Copy(pw, randomReader(10<<20, 2))
		cancel()
		pw.CloseWithError(errors.New("the client went away"))
	}()
	req, _ = http.NewRequestWithContext(cctx, http.MethodPost, srv.URL+"/v1/content", pr)
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("Authorization", "Bearer "+c.Token())
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusCreated {
			t.Fatal("a cut upload was stored")
		}
	}
	wait.Until(t, 30*time.Second, func() error {
		if d.discarded(t) < 2 {
			return errNotYet
		}
		return nil
	})
	if _, err := c.Upload(ctx, bytes.NewReader(nil)); apiStatus(t, err) != http.StatusBadRequest {
		t.Fatalf("empty upload: %v", err)
	}

	if n, bytes, largest := leaked(blocks0, d.blocks(t)); bytes > 64<<10 || largest >= 64<<10 {
		t.Fatalf("the refused uploads left %d blocks, %d bytes (largest %d)", n, bytes, largest)
	}
	if size, files := dirUsage(t, d.dsDir); size-size0 > 4<<20 || files > files0+1 {
		t.Fatalf("datastore directory: %d files, %d bytes after the refused uploads; %d files, %d bytes before", files, size, files0, size0)
	}
	if size, files := dirUsage(t, d.staging); files != 0 {
		t.Fatalf("staging holds %d files, %d bytes", files, size)
	}

	// Within the limit: stored, pinned, nothing left in staging.
	up, err := c.Upload(ctx, randomReader(3<<20, 3))
	if err != nil {
		t.Fatal(err)
	}
	k, err := cid.Decode(up.CID)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := d.IPFS.IsPinned(ctx, k); err != nil || !ok {
		t.Fatalf("upload not pinned: %v", err)
	}
	// The same measure sees an upload that was kept.
	if _, bytes, largest := leaked(blocks0, d.blocks(t)); bytes < 3<<20 || largest < 64<<10 {
		t.Fatalf("a stored 3 MiB upload shows as %d new bytes (largest block %d)", bytes, largest)
	}
	if _, files := dirUsage(t, d.staging); files != 0 {
		t.Fatalf("staging holds %d files after an upload", files)
	}
}

type notYet struct{}

func (notYet) Error() string { return "not yet" }

var errNotYet error = notYet{}
