// Package examples holds example jobmesh jobs, each a Go program for
// GOOS=wasip1 that reads one block of a job's data on stdin and writes that
// block's result to stdout (see package wasm for the sandbox they run in):
//
//   - mandelbrot: a block is a 64-byte tile descriptor, the result is the tile
//     as a PNG; package mandelbrot/tiles makes the job data and decodes it.
//   - wordcount: a block is text, the result is its word frequencies in a
//     canonical form; package wordcount/counts packs text into blocks and
//     merges block results into the job's total.
//   - c/upper.c: a job in C (tr a-z A-Z on each block), built with clang
//     for wasm32-wasi against wasi-libc (TestCJob builds and runs it).
//
// The Go programs are ordinary Go and also run natively. Build compiles one to a
// WebAssembly module with the local Go toolchain; `go generate` in an example's
// directory writes the same module to a file there.
package examples
