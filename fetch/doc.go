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
// Every connection goes through a dial guard that refuses loopback,
// private, link-local, CGNAT, multicast and cloud metadata addresses,
// checked on the resolved address at dial time so that DNS names and
// redirects cannot get around it (Config.AllowPrivateAddresses turns it
// off for development). Every failure to connect (a refused or closed
// port, a timeout, no route, a forbidden address, a failed handshake)
// comes back as the bare ErrUnreachable, so that a fetch tells nothing
// about the ports of the hosts it tries; the cause is in the debug log.
//
// Errors wrap sentinels (ErrUnsupportedScheme, ErrUnreachable, ErrNotFound,
// ErrTooLarge, ErrHashMismatch, ...) for errors.Is. The microjob runner uses
// this package to get a job's WebAssembly module and its data blocks; it is
// the only part of jobmesh that reaches outside the mesh for content.
package fetch
