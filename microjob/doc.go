// Package microjob runs one MicroJob: fetch its blocks, execute them, hash the
// outputs, store them in IPFS and publish the commitment and disclosure.
package microjob
