package custody

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

// VerdictRecord is the record a finalizer of job id writes for rec:
// inline when it fits Config.MaxInlineVerdict, otherwise with its body
// added to this node's block layer, pinned for the job, which serves it
// over bitswap to connected peers; the body is also provided to the
// routing layer, best-effort.
func (k *Keeper) VerdictRecord(ctx context.Context, id jobs.ID, rec records.VerdictRecord) (records.VerdictRecord, error) {
	var blocks records.BodyAdder
	if k.p.Blocks != nil {
		blocks = k.p.Blocks
	}
	out, err := records.BuildVerdictRecord(ctx, rec, k.cfg.MaxInlineVerdict, blocks)
	if err != nil || out.Body == "" {
		return out, err
	}
	k.log.Info("verdict stored out of line", "job", id, "body", out.Body, "sha256", out.BodySHA256)
	c, _ := cid.Decode(out.Body)
	k.Pin(ctx, id, c)
	if p, ok := blocks.(bodyProvider); ok {
		pctx, cancel := context.WithTimeout(ctx, provideTimeout)
		defer cancel()
		if err := p.Provide(pctx, c); err != nil {
			k.log.Debug("providing verdict body", "body", out.Body, "err", err)
		}
	}
	return out, nil
}

// Bodies is the block layer as a BodyReader, to open verdict bodies; nil
// without one.
func (k *Keeper) Bodies() records.BodyReader {
	if k.p.Blocks == nil {
		return nil
	}
	return k.p.Blocks
}
