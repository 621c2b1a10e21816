package processor

import (
	"context"
	"time"

	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

const (
	// DefaultMaxInlineVerdict is Config.MaxInlineVerdict's default: well
	// under the store's 256 KiB default payload limit.
	DefaultMaxInlineVerdict = 192 << 10
	// provideTimeout bounds the best-effort announcement of a new body.
	provideTimeout = 30 * time.Second
)

// bodyProvider announces a stored body; *ipfs.Node satisfies it. Optional:
// connected peers fetch the body over bitswap either way.
type bodyProvider interface {
	Provide(ctx context.Context, c cid.Cid) error
}

// verdictRecord is the record finalize writes for rec: inline when it fits
// Config.MaxInlineVerdict, otherwise with its body added to this node's
// block layer, which serves it over bitswap to connected peers; the body is
// also provided to the routing layer, best-effort.
func (w *Worker) verdictRecord(ctx context.Context, id jobs.ID, rec records.VerdictRecord) (records.VerdictRecord, error) {
	limit := w.cfg.MaxInlineVerdict
	if limit == 0 {
		limit = DefaultMaxInlineVerdict
	}
	var blocks records.BodyAdder
	if w.p.Blocks != nil {
		blocks = w.p.Blocks
	}
	out, err := records.BuildVerdictRecord(ctx, rec, limit, blocks)
	if err != nil || out.Body == "" {
		return out, err
	}
	w.log.Info("verdict stored out of line", "job", id, "body", out.Body, "sha256", out.BodySHA256)
	c, _ := cid.Decode(out.Body)
	w.pinForJob(ctx, id, c)
	if p, ok := blocks.(bodyProvider); ok {
		pctx, cancel := context.WithTimeout(ctx, provideTimeout)
		defer cancel()
		if err := p.Provide(pctx, c); err != nil {
			w.log.Debug("providing verdict body", "body", out.Body, "err", err)
		}
	}
	return out, nil
}

// bodyBlocks is the worker's block layer as a BodyReader; nil without one.
func (w *Worker) bodyBlocks() records.BodyReader {
	if w.p.Blocks == nil {
		return nil
	}
	return w.p.Blocks
}
