// Package api is the node's local HTTP API, versioned under /v1, plus
// Prometheus /metrics: the node's identity, peers and processors, job
// summaries derived from the replicated store and the escrow, and the
// submitting side (content uploads, job submission, cancellation) served
// through the node's DApp client. Every error is a JSON {"error": ...} with
// a status that says what went wrong; request bodies have size limits. The
// API is described by the embedded OpenAPI 3.1 document (openapi.yaml,
// served at /v1/openapi.yaml). Go programs reach it with package
// meshclient.
//
// The API serves from the parts a node hands it (Deps) and asks the node
// for what takes its view of the processors (Mesh: advertisements,
// dispatch grades, the queue), in the API's own types: so it depends on
// neither the node nor the processor, and a test can serve it without a
// mesh. Its Config is also the [api] section of a node's config file.
//
// The node's wallet pays for what the API submits, so every request passes
// a guard first (guard.go): its Host must be a loopback name or an allowed
// host (DNS rebinding), it must not come from another origin's page, a
// state-changing request must not carry form content, and it must carry the
// credentials its route's access level asks for: the repo's bearer token,
// or a dashboard session (session.go) whose changes also carry the
// session's CSRF token. Reads of what the mesh already shares are open to
// loopback clients. The server (Listen) bounds header, body, write and idle
// times, and the event streams are capped per client.
package api
