// Package wasm executes WebAssembly MicroJob code on wazero, deterministically
// and within memory and time caps.
package wasm
