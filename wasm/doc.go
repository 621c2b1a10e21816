// Package wasm executes WebAssembly MicroJob code on wazero, deterministically
// and within memory, time and output caps.
//
// A job's code is a WASI preview 1 command module: one block of the job's data
// arrives on stdin, the module writes that block's result to stdout and exits.
// The [Executor] runs such modules so that every processor in the mesh computes
// the same bytes for the same (code, block), which is what lets verifier
// MicroJobs compare hashes:
//
//   - no ambient clock: the wall clock starts at [Epoch] and the monotonic clock
//     at zero, and each reading advances both by one millisecond; sleeping
//     returns at once;
//   - no ambient randomness: random_get reads a ChaCha8 stream keyed by
//     [Config.RandSeed] (all zero by default), restarted for every run;
//   - no files, no network, no environment variables, and the fixed argument
//     list [ProgramName].
//
// Hostile code fails only its own run, each failure with a sentinel error:
// [ErrTrap], [ErrTimeout], [ErrMemoryLimit], [ErrOutputTooLarge], [ErrExit]
// (as an [*ExitError] carrying the code) and [ErrInvalidModule].
//
// Compiled modules are cached in memory by the SHA-256 of their code (a
// bounded LRU) and, when [Config.CacheDir] is set, on disk through wazero's
// compilation cache, so a processor that runs many blocks of one job compiles
// its code once.
//
// The [Runner] interface is what the rest of jobmesh depends on, so that other
// executors (GPU kernels, for instance) can sit beside this one.
package wasm
