package node

import (
	"context"
	"slices"
	"time"

	"github.com/jobmesh/jobmesh/processor"
)

// directory gives the processor role the advertised processors, read from
// the store's /nodes records.
type directory struct{ n *Node }

var _ processor.Directory = directory{}

// Processors implements processor.Directory.
func (d directory) Processors(ctx context.Context) ([]processor.Advertised, error) {
	ads, err := d.n.Processors(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]processor.Advertised, len(ads))
	for i, a := range ads {
		out[i] = processor.Advertised{
			PeerID: a.PeerID, CardModel: a.CardModel, VRAMMiB: a.VRAMMiB,
			Models: slices.Clone(a.Models), Wallet: a.Wallet,
			Timeout: time.Duration(a.ProcessTimeout) * time.Second, Updated: a.Updated,
		}
	}
	return out, nil
}
