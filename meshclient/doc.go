// Package meshclient is the Go SDK for DApps: a small client of a jobmesh
// node's HTTP API (/v1). It uploads content, submits jobs, follows them to
// their end, fetches their output and cancels them, and lists the node's
// peers and the mesh's processors.
//
// It depends only on the standard library and the wire types of package
// apiv1, so a DApp can use it without pulling in the node. The jobnode
// command's own job, id, peers and nodes commands are built on it.
//
// The node requires its API token (the repo's api.token file) for
// everything that changes state: ForRepo reads it, WithToken passes it.
//
// Errors the API answers keep its status and message: match them with
// errors.As against *Error. A node that does not answer (no daemon on the
// repo, or it stopped) gives an error wrapping ErrNotRunning.
package meshclient
