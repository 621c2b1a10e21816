package api

import (
	"net/http"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/node"
)

// The dispatch endpoints' bodies are apiv1 types.
type (
	DispatchNodes = apiv1.DispatchNodes
	DispatchNode  = apiv1.DispatchNode
	Queue         = apiv1.Queue
	QueueGroup    = apiv1.QueueGroup
	QueueJob      = apiv1.QueueJob
)

// registerDispatch adds the dispatch endpoints, open to loopback reads.
func registerDispatch(h *Handler, n *node.Node) {
	h.handle("GET /v1/dispatch/nodes", accessLocal, func(w http.ResponseWriter, r *http.Request) {
		v, err := n.DispatchView(r.Context())
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		out := DispatchNodes{Live: v.Live(), Tasks: v.Tasks, Processors: []DispatchNode{}}
		for _, p := range v.Processors {
			d := DispatchNode{
				PeerID: p.ID, CardModel: p.CardModel, VRAMMiB: p.VRAM, Wallet: p.Wallet, StakeWei: "0",
				QoS: p.QoS, VRAMScore: p.Scores.R, TimeoutScore: p.Scores.P, SpeedScore: p.Scores.B, Weight: p.Weight,
			}
			if p.Stake != nil {
				d.StakeWei = p.Stake.String()
			}
			if p.Kick != nil {
				d.Kicked = string(p.Kick.Reason)
			}
			out.Processors = append(out.Processors, d)
		}
		writeJSON(w, http.StatusOK, out)
	})
	h.handle("GET /v1/queue", accessLocal, func(w http.ResponseWriter, r *http.Request) {
		q, err := n.Queue(r.Context())
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		out := Queue{Live: q.Live, Cap: q.Cap, Groups: []QueueGroup{}}
		for _, g := range q.Groups {
			og := QueueGroup{Label: g.Label, Jobs: []QueueJob{}}
			for _, j := range g.Jobs {
				qj := QueueJob{ID: j.ID.String(), PriceWei: j.PriceWei.String(), EstimatedSeconds: j.Estimated.Seconds(), Started: j.Started}
				if j.Value != nil {
					qj.Value = j.Value.FloatString(6)
				}
				og.Jobs = append(og.Jobs, qj)
			}
			out.Groups = append(out.Groups, og)
		}
		writeJSON(w, http.StatusOK, out)
	})
}
