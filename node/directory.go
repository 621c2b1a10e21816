package node

import (
	"context"
	"slices"
	"time"

	"github.com/jobmesh/jobmesh/meshview"
	"github.com/jobmesh/jobmesh/records"
)

// directory gives the processor role the advertised processors, read from
// the store's /nodes records.
type directory struct{ n *Node }

var _ meshview.Directory = directory{}

// Processors implements meshview.Directory.
func (d directory) Processors(ctx context.Context) ([]meshview.Advertised, error) {
	ads, err := d.n.Processors(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]meshview.Advertised, len(ads))
	for i, a := range ads {
		out[i] = meshview.Advertised{
			PeerID: a.PeerID, CardModel: a.CardModel, VRAMMiB: a.VRAMMiB,
			Models: slices.Clone(a.Models), Wallet: a.Wallet,
			Timeout: time.Duration(a.ProcessTimeout) * time.Second, Updated: a.Updated,
			Started: a.Started,
		}
	}
	return out, nil
}

// DispatchView returns the live processors with their grades, stakes, QoS
// scores and selection weights: a processor's own latest view, or on other
// nodes one read from the store and the chain now.
func (n *Node) DispatchView(ctx context.Context) (*meshview.View, error) {
	if n.Worker != nil {
		if v := n.Worker.View(); v != nil {
			return v, nil
		}
	}
	f, err := n.dispatchFacts()
	if err != nil {
		return nil, err
	}
	list := meshview.FinishedJobs
	if n.Escrow != nil {
		list = meshview.SummarizedJobs
	}
	ids, err := list(ctx, n.Store)
	if err != nil {
		return nil, err
	}
	return f.View(ctx, ids)
}

// dispatchFacts returns the node's meshview.Facts, made on first use. It
// reads stakes afresh on every view (an operator looks at them right
// after staking); what it derives of finished and settled jobs it keeps.
func (n *Node) dispatchFacts() (*meshview.Facts, error) {
	n.factsMu.Lock()
	defer n.factsMu.Unlock()
	if n.facts != nil {
		return n.facts, nil
	}
	pc := n.Config.ProcessorConfig()
	var stakes meshview.StakeReader
	var settled meshview.Settlements
	if n.Escrow != nil {
		stakes, settled = n.Escrow, n.Escrow
	}
	var blocks records.BodyReader
	if n.IPFS != nil {
		blocks = n.IPFS
	}
	f, err := meshview.NewFacts(meshview.FactsParams{Store: n.Store, Directory: directory{n}, Stakes: stakes, Settlements: settled, Blocks: blocks, Rules: n.rules, Logger: n.Log},
		meshview.FactsConfig{Dispatch: pc.Dispatch, AdvertTTL: pc.AdvertTTL, StakeTTL: time.Nanosecond, HistoryJobs: meshview.DefaultFactsConfig().HistoryJobs, Probes: pc.Probes})
	if err != nil {
		return nil, err
	}
	n.facts = f
	return f, nil
}

// Queue returns the open jobs in their dispatch groups, with the cap for
// the live processors.
func (n *Node) Queue(ctx context.Context) (meshview.QueueView, error) {
	v, err := n.DispatchView(ctx)
	if err != nil {
		return meshview.QueueView{}, err
	}
	return meshview.ReadQueue(ctx, n.Store, n.Config.ProcessorConfig().Dispatch, v)
}
