// Package fetch gets job code and data by URI and checks the content
// against its expected SHA-256.
//
// A Registry dispatches a URI to the Fetcher of its scheme:
//
//	https://, wss://          always (TLS; Config.TLSConfig or system roots)
//	http://, ws://            only with Config.AllowPlaintext (local tests, private networks)
//	file:///abs/path          only inside Config.FileRoot, opened through os.Root
//	sftp://user@host:port/p   with credentials and a host key check in Config.SFTP
//	ipfs://CID[/path]         through the caller's IPFS (UnixFS adapts a boxo DAG service)
//
// For ws:// and wss:// the content is the concatenation of the binary
// messages until the server closes with status 1000; any other end is an
// error. The Registry bounds every fetch by Config.Timeout and enforces the
// size limit while streaming, so an oversized or endless source costs at
// most limit+1 bytes. FetchVerified returns content only when its hash
// matches.
//
// Errors wrap sentinels (ErrUnsupportedScheme, ErrUnreachable, ErrNotFound,
// ErrTooLarge, ErrHashMismatch, ...) for errors.Is. The microjob runner uses
// this package to get a job's WebAssembly module and its data blocks; it is
// the only part of jobmesh that reaches outside the mesh for content.
package fetch
