// Package jobs holds JobInfo (the description of a job a DApp submits), its
// validation, its canonical encoding and ID, and the pure slicing of a job
// into MacroJobs and MicroJobs.
//
// A JobInfo is immutable once published: its ID is the SHA-256 of its
// canonical encoding (Encode), and Decode accepts only canonical bytes, so
// one job has exactly one encoding and one ID. Validate reports every bad
// field at once, each error wrapping a sentinel such as ErrInvalidURI or
// ErrInvalidSlicing.
//
// Slice is a pure function of the JobInfo: every node recomputes the same
// Plan. Data is cut into fixed-size blocks; each MacroJob holds N regular
// MicroJobs of K blocks plus one verifier MicroJob whose K' blocks repeat
// one block of each of K' distinct regular MicroJobs. The choices come from
// a SHA-256 counter-mode stream (Stream) seeded with the job seed and the
// MacroJob index, specified byte for byte in docs/PROTOCOL.md with golden
// vectors in testdata/, so another implementation or a contract can
// recompute them.
//
// Caveat: the seed travels in the JobInfo, so anyone who reads the JobInfo
// can recompute which MicroJob is the verifier. Hiding the verifier from
// processors needs the seed kept back until settlement (see
// docs/ARCHITECTURE.md).
//
// The package does no I/O; package fetch gets the code and data the URIs
// name, and the node stores JobInfo in the replicated store.
package jobs
