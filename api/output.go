package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ipfs/boxo/ipld/merkledag"
	uio "github.com/ipfs/boxo/ipld/unixfs/io"
	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/assemble"
	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/ipfs"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// ErrNoVerdict: the job has no verified verdict yet, so no output.
var ErrNoVerdict = errors.New("api: the job has no verified output yet")

// ErrNotPNGGrid: the job's output is not a picture of tiles.
var ErrNotPNGGrid = errors.New("api: the job's output is not png-grid")

// outputTimeout bounds fetching an output's blocks from the mesh.
const outputTimeout = time.Minute

// maxTileMaps bounds the tile pictures an Outputs keeps.
const maxTileMaps = 16

// Outputs serves a finished job's assembled output and, for png-grid
// jobs, the picture of which processor computed which tile. Both come from
// the verdict in the store and the blocks behind it, fetched through the
// node's block layer.
type Outputs struct {
	Store  crdt.Reader
	Blocks microjob.ResultReader
	// Summarized, when set, gives the output CID of a settled job whose
	// verdict this node does not hold, from its checked outcome summary
	// (JobView.summarized); false when there is none.
	Summarized func(ctx context.Context, info *jobs.JobInfo) (cid.Cid, bool, error)

	mu    sync.Mutex
	tiles map[jobs.ID]tileMap // verified outputs never change
}

type tileMap struct {
	png    []byte
	legend string
}

// finished returns a job and its verdict; ErrNoSuchJob, or ErrNoVerdict
// (with the job) when there is none yet.
func (o *Outputs) finished(ctx context.Context, id jobs.ID) (*jobs.JobInfo, dapp.Result, error) {
	r, err := o.Store.Get(ctx, records.JobKey(id))
	if errors.Is(err, crdt.ErrNotFound) {
		return nil, dapp.Result{}, fmt.Errorf("%w: %s", ErrNoSuchJob, id)
	}
	if err != nil {
		return nil, dapp.Result{}, err
	}
	info, err := jobs.Decode(r.Payload)
	if err != nil || info.ID() != id {
		return nil, dapp.Result{}, fmt.Errorf("%w: %s: the stored record is not that job", ErrNoSuchJob, id)
	}
	res, ok, err := dapp.LoadStatus(ctx, o.Store, o.Blocks, id)
	if err != nil {
		return nil, dapp.Result{}, err
	}
	if !ok || !res.Verdict.Verified {
		return info, dapp.Result{}, fmt.Errorf("%w: job %s", ErrNoVerdict, id)
	}
	return info, res, nil
}

// output returns a finished job and its output's root: the verdict's, or
// where this node holds no verdict, its outcome summary's (Summarized).
func (o *Outputs) output(ctx context.Context, id jobs.ID) (*jobs.JobInfo, cid.Cid, error) {
	info, res, err := o.finished(ctx, id)
	if err == nil {
		return info, res.Output, nil
	}
	if !errors.Is(err, ErrNoVerdict) || o.Summarized == nil || info == nil {
		return nil, cid.Undef, err
	}
	root, ok, serr := o.Summarized(ctx, info)
	if serr != nil {
		return nil, cid.Undef, serr
	}
	if !ok {
		return nil, cid.Undef, err
	}
	return info, root, nil
}

// ServeOutput answers GET /v1/jobs/{id}/output.
func (o *Outputs) ServeOutput(w http.ResponseWriter, r *http.Request) {
	id, ok := pathJob(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), outputTimeout)
	defer cancel()
	info, root, err := o.output(ctx, id)
	if err != nil {
		writeJobError(w, err)
		return
	}
	f, err := o.open(ctx, root, microjob.OutputFileName(info.Output.Kind))
	if err != nil {
		writeJobError(w, err)
		return
	}
	ct := "application/octet-stream"
	if info.Output.Kind == jobs.OutputPNGGrid {
		ct = "image/png"
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	// The output is content-addressed: it never changes.
	h.Set("ETag", `"`+root.String()+`"`)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Content-CID", root.String())
	http.ServeContent(w, r, "", time.Time{}, f)
}

// open reads the file name in the UnixFS directory root.
func (o *Outputs) open(ctx context.Context, root cid.Cid, name string) (uio.DagReader, error) {
	dag := o.Blocks.DAGService()
	nd, err := dag.Get(ctx, root)
	if err != nil {
		return nil, fmt.Errorf("%w: output %s: %w", ipfs.ErrNotFound, root, err)
	}
	dir, err := uio.NewDirectoryFromNode(dag, nd)
	if err != nil {
		return nil, fmt.Errorf("api: output %s is not a directory: %w", root, err)
	}
	child, err := dir.Find(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("%w: %s in output %s: %w", ipfs.ErrNotFound, name, root, err)
	}
	fn, err := dag.Get(ctx, child.Cid())
	if err != nil {
		return nil, fmt.Errorf("%w: %s in output %s: %w", ipfs.ErrNotFound, name, root, err)
	}
	return uio.NewDagReader(ctx, fn, merkledag.NewSession(ctx, dag))
}

// ServeTiles answers GET /v1/jobs/{id}/tiles.png. The X-Tile-Legend
// header names each processor's colour: "peerID=#rrggbb" joined by ",".
func (o *Outputs) ServeTiles(w http.ResponseWriter, r *http.Request) {
	id, ok := pathJob(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), outputTimeout)
	defer cancel()
	o.mu.Lock()
	tm, cached := o.tiles[id]
	o.mu.Unlock()
	if !cached {
		info, res, err := o.finished(ctx, id)
		if err != nil {
			writeJobError(w, err)
			return
		}
		if info.Output.Kind != jobs.OutputPNGGrid {
			writeError(w, http.StatusNotFound, fmt.Errorf("%w: job %s assembles %q", ErrNotPNGGrid, id, info.Output.Kind))
			return
		}
		plan, err := jobs.Slice(info)
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		pic, order, err := microjob.TileMap(ctx, info, plan, res.Verdict, o.Blocks, nil)
		if err != nil {
			writeJobError(w, err)
			return
		}
		legend := make([]string, len(order))
		for i, p := range order {
			c := assemble.ProcessorColour(i)
			legend[i] = fmt.Sprintf("%s=#%02x%02x%02x", p, c.R, c.G, c.B)
		}
		tm = tileMap{png: pic, legend: strings.Join(legend, ",")}
		o.mu.Lock()
		if o.tiles == nil || len(o.tiles) >= maxTileMaps {
			o.tiles = map[jobs.ID]tileMap{}
		}
		o.tiles[id] = tm
		o.mu.Unlock()
	}
	h := w.Header()
	h.Set("Content-Type", "image/png")
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Tile-Legend", tm.legend)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(tm.png))
}

// pathJob parses the {id} path value, answering 400 when it is bad.
func pathJob(w http.ResponseWriter, r *http.Request) (jobs.ID, bool) {
	id, err := jobs.ParseHash(r.PathValue("id"))
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("job ID: %w", err))
		return jobs.ID{}, false
	}
	return id, true
}

// writeJobError answers with the status an output error calls for.
func writeJobError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrNoSuchJob):
		writeError(w, http.StatusNotFound, err)
	case errors.Is(err, ErrNoVerdict):
		writeError(w, http.StatusConflict, err)
	case errors.Is(err, ipfs.ErrNotFound), errors.Is(err, context.DeadlineExceeded):
		writeError(w, http.StatusGatewayTimeout, err)
	default:
		writeError(w, http.StatusInternalServerError, err)
	}
}
