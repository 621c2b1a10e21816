// Package api is the node's local HTTP API (versioned under /v1, plus
// Prometheus /metrics) and the Go client that the CLI uses to reach a
// running daemon.
package api
