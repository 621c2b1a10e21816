package node

import (
	"context"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/apiv1"
)

// APIDeps returns the parts of n its API serves from.
func (n *Node) APIDeps() api.Deps {
	d := api.Deps{
		Host: n.Host, Role: string(n.Role), Version: Version, Store: n.Store, IPFS: n.IPFS,
		DApp: n.DApp, Escrow: n.Escrow, Metrics: n.Metrics, Log: n.Log, Mesh: apiMesh{n},
		FailReports: n.Config.Dispatch.FailReports, Operator: n.Operator,
	}
	if n.jobStores != nil {
		d.Holds = n.jobStores.Holds
	}
	return d
}

// apiMesh answers the API's mesh reads in its own types.
type apiMesh struct{ n *Node }

var _ api.Mesh = apiMesh{}

// Processors implements api.Mesh.
func (m apiMesh) Processors(ctx context.Context) ([]apiv1.Node, error) {
	ads, err := m.n.Processors(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]apiv1.Node, len(ads))
	for i, a := range ads {
		out[i] = apiv1.Node{
			PeerID: a.PeerID, Role: string(a.Role), CardModel: a.CardModel, VRAMMiB: a.VRAMMiB, CPUs: a.CPUs,
			Models: a.Models, Wallet: a.Wallet, Version: a.Version, Addrs: a.Addrs,
			ProcessTimeout: a.ProcessTimeout, Updated: a.Updated,
		}
	}
	return out, nil
}

// Dispatch implements api.Mesh.
func (m apiMesh) Dispatch(ctx context.Context) (api.DispatchNodes, error) {
	v, err := m.n.DispatchView(ctx)
	if err != nil {
		return api.DispatchNodes{}, err
	}
	out := api.DispatchNodes{Live: v.Live(), Tasks: v.Tasks, TimeoutWindow: v.TimeoutWindow, Processors: []api.DispatchNode{}}
	for _, p := range v.Processors {
		d := api.DispatchNode{
			PeerID: p.ID, CardModel: p.CardModel, VRAMMiB: p.VRAM, Wallet: p.Wallet, StakeWei: "0",
			QoS: p.QoS, VRAMScore: p.Scores.R, TimeoutScore: p.Scores.P, SpeedScore: p.Scores.B, Weight: p.Weight,
			Timeouts: p.Timeouts,
		}
		if p.Stake != nil {
			d.StakeWei = p.Stake.String()
		}
		if !p.SpeedAt.IsZero() {
			at := p.SpeedAt.UTC()
			d.SpeedAt = &at
		}
		if p.Kick != nil {
			d.Kicked = string(p.Kick.Reason)
			if !p.Kick.At.IsZero() {
				at := p.Kick.At.UTC()
				d.KickedAt = &at
			}
		}
		out.Processors = append(out.Processors, d)
	}
	return out, nil
}

// Queue implements api.Mesh.
func (m apiMesh) Queue(ctx context.Context) (api.Queue, error) {
	q, err := m.n.Queue(ctx)
	if err != nil {
		return api.Queue{}, err
	}
	out := api.Queue{Live: q.Live, Cap: q.Cap, Groups: []api.QueueGroup{}}
	for _, g := range q.Groups {
		og := api.QueueGroup{Label: g.Label, Jobs: []api.QueueJob{}}
		for _, j := range g.Jobs {
			qj := api.QueueJob{ID: j.ID.String(), PriceWei: j.PriceWei.String(), EstimatedSeconds: j.Estimated.Seconds(), Started: j.Started}
			if j.Value != nil {
				qj.Value = j.Value.FloatString(6)
			}
			og.Jobs = append(og.Jobs, qj)
		}
		out.Groups = append(out.Groups, og)
	}
	return out, nil
}
