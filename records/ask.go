package records

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jobmesh/jobmesh/jobs"
)

// AskVersion is the version of the ask record.
const AskVersion = 1

// MaxAsked bounds the peers one ask record names, and maxAskRecord its
// payload.
const (
	MaxAsked     = 64
	maxAskRecord = 4 << 10
)

// Ask is a hint in the mesh store: the processors its author asked to
// re-run blocks of a job (its dispute and check records). Those requests
// live in the job's store, which a processor holds only when it could
// serve the job; a processor named here joins the store to find them.
// One record per author and job, under AskKey, rewritten with every peer
// asked so far. It is evidence of nothing: who is asked, and whether the
// request was the author's to make, is read from the requests themselves.
type Ask struct {
	Version int    `json:"version"` // AskVersion
	Job     string `json:"job"`
	// Peers are the asked processors' peer IDs, ascending, each once,
	// 1 to MaxAsked.
	Peers []string `json:"peers"`
}

// AskKey is where author keeps its ask record of job id.
func AskKey(id jobs.ID, author string) string { return JobKey(id) + "/ask/" + author }

// EncodeAsk encodes the ask record of job id naming peers (sorted and
// deduplicated here).
func EncodeAsk(id jobs.ID, peers []string) ([]byte, error) {
	ps := slices.Compact(slices.Sorted(slices.Values(peers)))
	a := Ask{Version: AskVersion, Job: id.String(), Peers: ps}
	if err := checkAsk(a); err != nil {
		return nil, err
	}
	return json.Marshal(a)
}

// DecodeAsk decodes and checks an ask record of job id: at most 4 KiB, no
// unknown fields, its version, its job, and 1 to MaxAsked canonical peer
// IDs in ascending order.
func DecodeAsk(id jobs.ID, b []byte) (Ask, error) {
	var a Ask
	if len(b) > maxAskRecord {
		return a, fmt.Errorf("%w: ask record of %d bytes, limit %d", ErrBadRecord, len(b), maxAskRecord)
	}
	if err := decodeStrict(b, &a); err != nil {
		return a, err
	}
	if a.Job != id.String() {
		return a, fmt.Errorf("%w: ask record of job %q under job %s", ErrBadRecord, a.Job, id)
	}
	return a, checkAsk(a)
}

func checkAsk(a Ask) error {
	switch {
	case a.Version != AskVersion:
		return fmt.Errorf("%w: ask record version %d", ErrBadRecord, a.Version)
	case len(a.Peers) == 0 || len(a.Peers) > MaxAsked:
		return fmt.Errorf("%w: ask record names %d peers, 1 to %d", ErrBadRecord, len(a.Peers), MaxAsked)
	}
	for i, p := range a.Peers {
		if err := checkPeer(p); err != nil {
			return fmt.Errorf("%w: ask record: %w", ErrBadRecord, err)
		}
		if i > 0 && p <= a.Peers[i-1] {
			return fmt.Errorf("%w: ask record: peers not ascending at %q", ErrBadRecord, p)
		}
	}
	return nil
}
