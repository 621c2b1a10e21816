// Package api is the node's local HTTP API, versioned under /v1, plus
// Prometheus /metrics: the node's identity, peers and processors, job
// summaries derived from the replicated store and the escrow, and the
// submitting side (content uploads, job submission, cancellation) served
// through the node's DApp client. Every error is a JSON {"error": ...} with
// a status that says what went wrong; request bodies have size limits. The
// API is described by the embedded OpenAPI 3.1 document (openapi.yaml,
// served at /v1/openapi.yaml). Go programs reach it with package
// meshclient.
package api
