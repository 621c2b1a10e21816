// Package ui is the node's web dashboard: static HTML, CSS and plain
// JavaScript embedded in the binary and served at /ui/ by the API. The page
// has no build step and fetches nothing from outside the node: it reads
// /v1/id, /v1/peers and /v1/nodes, follows /v1/events for live job
// progress, and shows a verified picture job's /v1/jobs/{id}/output and
// /v1/jobs/{id}/tiles.png.
package ui
