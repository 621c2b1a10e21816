// Package apiv1 holds the wire types of the node's versioned HTTP API
// (/v1/...): the job summaries, submit requests and events that the node's
// server writes, the Go SDK reads, and the dashboard shows. It imports
// nothing of the node, so that a DApp that only talks to a node over HTTP
// does not link the mesh.
package apiv1
