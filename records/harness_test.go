package records_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"
	mh "github.com/multiformats/go-multihash"

	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/p2p/p2ptest"
)

// newPeer returns a fresh peer ID.
func newPeer(t testing.TB) peer.ID { return p2ptest.NewPeerID(t) }

// rawCID is a CID naming some bytes, for records whose content is not read.
func rawCID(t testing.TB, b []byte) cid.Cid {
	t.Helper()
	sum, err := mh.Sum(b, mh.SHA2_256, -1)
	if err != nil {
		t.Fatal(err)
	}
	return cid.NewCidV1(cid.Raw, sum)
}

// sampleDisclosure is a disclosure by proc of MicroJob "micro" in
// MacroJob 7 of job "job", and its commitment.
func sampleDisclosure(t testing.TB, proc string) (microjob.Disclosure, microjob.Commitment) {
	t.Helper()
	salt, err := microjob.NewSalt()
	if err != nil {
		t.Fatal(err)
	}
	w := sha256.Sum256([]byte(proc))
	d := microjob.Disclosure{
		Version: microjob.RecordVersion, JobID: sha256.Sum256([]byte("job")), MacroIndex: 7,
		MicroID: sha256.Sum256([]byte("micro")), Processor: proc, Wallet: "0x" + hex.EncodeToString(w[:20]),
		BlockIndices: []uint64{3, 9, 12},
		BlockHashes:  [][32]byte{sha256.Sum256([]byte("a")), sha256.Sum256([]byte("b")), sha256.Sum256([]byte("c"))},
		ResultCID:    rawCID(t, []byte("dir of "+proc)),
		Salt:         salt,
	}
	c, err := d.Commitment()
	if err != nil {
		t.Fatal(err)
	}
	return d, c
}

// newPeerOf decodes a peer ID's text.
func newPeerOf(t testing.TB, s string) peer.ID {
	t.Helper()
	p, err := peer.Decode(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
