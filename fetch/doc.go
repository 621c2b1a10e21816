// Package fetch gets job code and data by URI (ipfs, https, file, sftp, ws)
// and checks the content against its expected hash.
package fetch
