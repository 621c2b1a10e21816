// Package models keeps a processor's models on disk and pre-downloads the
// ones the mesh names it to hold (seed 001, "Model locality and
// pre-download" in docs/PROTOCOL.md).
//
// A Store is a directory of model files named by their canonical CID,
// within a byte budget; files are written under a temporary name and
// renamed, so a model is whole or absent. A Fetcher asks its Assigner
// (the processor's worker) which models the current dispatch view names
// this processor to fetch for the open jobs, fetches them by CID through
// the block layer into the store, and backs off on failure.
//
// PreDownloads and Named are the pure rule: which processors fetch which
// model of a job, and which of those names are this processor's. The
// same view and job seed give the same names on every node. The package
// knows nothing of jobs' records or the worker's state.
package models
