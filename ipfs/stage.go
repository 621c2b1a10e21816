package ipfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ipfs/go-cid"
)

// Uploads are staged: the content is first spooled to a file in the
// staging directory, and only once all of it has arrived (within the
// caller's limits, from a client still there) is it imported into the
// block store and pinned, in one step under the GC's read lock. A refused
// or failed upload (too large, client gone, bad content) is a deleted
// spool file and nothing else: no block of it is ever written. The
// alternative, writing blocks as they arrive and deleting them on failure,
// cannot tell a block this upload wrote from the same block another
// import or pin wrote meanwhile, and would need a GC-wide lock for the
// whole transfer. The cost is one extra sequential write and read of
// the content on local disk.

// stagePrefix starts the names of spool files.
const stagePrefix = "upload-"

// openStaging prepares the staging directory: dir, emptied of spool
// files a crash left, or a new temporary directory when dir is empty.
func openStaging(dir string) (string, bool, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "jobmesh-staging-")
		if err != nil {
			return "", false, fmt.Errorf("ipfs: staging dir: %w", err)
		}
		return d, true, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", false, fmt.Errorf("ipfs: staging dir: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", false, fmt.Errorf("ipfs: staging dir: %w", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), stagePrefix) && e.Type().IsRegular() {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return "", false, fmt.Errorf("ipfs: staging dir: %w", err)
			}
		}
	}
	return dir, false, nil
}

// Staged is content spooled to the staging directory, not yet in the
// block store. Commit imports it, Discard drops it; one of them must be
// called.
type Staged struct {
	n    *Node
	f    *os.File
	size int64
	once sync.Once
}

// Stage spools r to the staging directory until r ends. When reading r
// fails (a size limit, a client gone), the spool file is deleted and the
// error returned, wrapped: nothing is left on disk.
func (n *Node) Stage(r io.Reader) (*Staged, error) {
	f, err := os.CreateTemp(n.staging, stagePrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("ipfs: stage: %w", err)
	}
	s := &Staged{n: n, f: f}
	if s.size, err = io.Copy(f, r); err != nil {
		s.Refuse()
		return nil, fmt.Errorf("ipfs: stage: %w", err)
	}
	return s, nil
}

// Size is how many bytes were staged.
func (s *Staged) Size() int64 { return s.size }

// Commit imports the staged content as a UnixFS file and pins it for
// owner until until (zero: no expiry), then deletes the spool file. The
// import and the pin happen under the GC's read lock, so no GC runs
// between them. If the import fails part way, the blocks it wrote are
// pinned by nothing, and the first GC after Config.GCGrace deletes them.
func (s *Staged) Commit(ctx context.Context, owner string, until time.Time) (cid.Cid, error) {
	defer s.Discard()
	if err := validOwner(owner); err != nil {
		return cid.Undef, err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return cid.Undef, fmt.Errorf("ipfs: stage: %w", err)
	}
	n := s.n
	n.gcMu.RLock()
	defer n.gcMu.RUnlock()
	c, err := n.AddFile(ctx, s.f)
	if err != nil {
		s.Refuse()
		return cid.Undef, err
	}
	if err := n.putPin(ctx, Pin{CID: c, Owner: owner, Created: n.now(), Expires: until}); err != nil {
		return cid.Undef, err
	}
	return c, nil
}

// Discard deletes the spool file; after Commit it does nothing.
func (s *Staged) Discard() error {
	var err error
	s.once.Do(func() {
		err = errors.Join(s.f.Close(), os.Remove(s.f.Name()))
	})
	return err
}

// Refuse is Discard for content the caller will not import (a failed
// check); it is counted in jobmesh_ipfs_staged_discarded_total.
// The file is gone before the count moves, so a reader of the metric
// never sees a refused upload still on disk.
func (s *Staged) Refuse() error {
	err := s.Discard()
	s.n.metrics.stagedDiscarded.Inc()
	return err
}
