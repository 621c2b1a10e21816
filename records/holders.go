package records

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
)

// Querier lists the records under a prefix; *crdt.Store satisfies it.
type Querier interface {
	Query(ctx context.Context, prefix string) ([]crdt.Record, error)
}

// A job's output must outlive the processor that assembled it: every node
// that holds the whole output DAG, pinned, says so with a holder record
// under HolderKey, written by that peer only (AuthorPolicy).

// Holder is the payload of a holder record: the output it holds.
type Holder struct {
	Output string `json:"output"` // CID of the assembled output
}

// WriteHolder writes self's holder record of job id's output.
func WriteHolder(ctx context.Context, store crdt.Writer, self peer.ID, id jobs.ID, out cid.Cid) error {
	return crdt.PutJSON(ctx, store, HolderKey(id, self), HolderType, Holder{Output: out.String()})
}

// HoldersOf returns the peers whose holder record says they hold output,
// job id's output (any output when output is cid.Undef), sorted. A
// record whose author is not the peer its key names, or that does not
// decode, is skipped.
func HoldersOf(ctx context.Context, store Querier, id jobs.ID, output cid.Cid) ([]peer.ID, error) {
	held, err := HeldOutputs(ctx, store, id)
	if err != nil {
		return nil, err
	}
	out := []peer.ID{}
	for p, c := range held {
		if !output.Defined() || c.Equals(output) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

// HeldOutputs returns, by peer, the output each valid holder record of
// job id names.
func HeldOutputs(ctx context.Context, store Querier, id jobs.ID) (map[peer.ID]cid.Cid, error) {
	recs, err := store.Query(ctx, strings.TrimSuffix(HoldersPrefix(id), "/"))
	if err != nil {
		return nil, fmt.Errorf("records: holders of job %s: %w", id, err)
	}
	held := make(map[peer.ID]cid.Cid, len(recs))
	for _, r := range recs {
		if p, c, ok := ReadHolder(id, r); ok {
			held[p] = c
		}
	}
	return held, nil
}

// ReadHolder checks one holder record of job id and returns its peer and
// the output it names; ok is false for a record that is not a valid
// holder record of the job written by the peer its key names.
func ReadHolder(id jobs.ID, r crdt.Record) (p peer.ID, output cid.Cid, ok bool) {
	name, found := strings.CutPrefix(r.Key, HoldersPrefix(id))
	if !found || r.Tombstone || r.Type != HolderType || name != r.AuthorText() {
		return "", cid.Undef, false
	}
	var h Holder
	if decodeStrict(r.Payload, &h) != nil {
		return "", cid.Undef, false
	}
	c, err := cid.Decode(h.Output)
	if err != nil {
		return "", cid.Undef, false
	}
	return r.Author, c, true
}
