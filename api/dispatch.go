package api

import (
	"net/http"

	"github.com/jobmesh/jobmesh/apiv1"
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
func registerDispatch(h *Handler, mesh Mesh) {
	h.handle("GET /v1/dispatch/nodes", accessLocal, func(w http.ResponseWriter, r *http.Request) {
		v, err := mesh.Dispatch(r.Context())
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		writeJSON(w, http.StatusOK, v)
	})
	h.handle("GET /v1/queue", accessLocal, func(w http.ResponseWriter, r *http.Request) {
		q, err := mesh.Queue(r.Context())
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		writeJSON(w, http.StatusOK, q)
	})
}
