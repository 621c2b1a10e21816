package finish

import (
	"context"
	"errors"
	"fmt"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// Holders returns the peers whose holder record (records.Holder) names
// the output of job id's verdict that counts (ReadVerdict, bodies read
// from blocks), sorted; while the job has no verdict, the peers holding
// any output. `jobnode job status` and GET /v1/jobs/{id} list them.
func Holders(ctx context.Context, store RecordReader, blocks records.BodyReader, id jobs.ID) ([]peer.ID, error) {
	out := cid.Undef
	chosen, err := ReadVerdict(ctx, store, blocks, id, nil)
	switch {
	case err == nil:
		if out, err = cid.Decode(chosen.Record.Output); err != nil {
			return nil, fmt.Errorf("finish: holders of job %s: the verdict's output: %w", id, err)
		}
	case !errors.Is(err, ErrNoVerdict):
		return nil, fmt.Errorf("finish: holders of job %s: %w", id, err)
	}
	return records.HoldersOf(ctx, store, id, out)
}
