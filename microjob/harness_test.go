package microjob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"sync"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/crypto"
	mh "github.com/multiformats/go-multihash"

	"github.com/jobmesh/jobmesh/examples"
	"github.com/jobmesh/jobmesh/ipfs"
	"github.com/jobmesh/jobmesh/ipfs/ipfstest"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/p2p/p2ptest"
	"github.com/jobmesh/jobmesh/wasm"
)

// newStore returns a real boxo store on a loopback libp2p host with no
// peers: every block it serves is local.
func newStore(t *testing.T) *ipfs.Node {
	t.Helper()
	_, n, _ := newHostStore(t)
	return n
}

// newHostStore is newStore that also returns the host and its key.
func newHostStore(t *testing.T) (*p2p.Host, *ipfs.Node, crypto.PrivKey) {
	t.Helper()
	return ipfstest.New(t)
}

var (
	sharedExecOnce sync.Once
	sharedExec     *wasm.Executor
	sharedExecErr  error
)

// executor returns one wazero executor for the package's tests, so that the
// example modules are compiled once.
func executor(t *testing.T) *wasm.Executor {
	t.Helper()
	sharedExecOnce.Do(func() { sharedExec, sharedExecErr = wasm.New(wasm.DefaultConfig(), nil) })
	if sharedExecErr != nil {
		t.Fatal(sharedExecErr)
	}
	return sharedExec
}

func buildExample(t *testing.T, name string) []byte {
	t.Helper()
	code, err := examples.Build(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// newJob returns a valid JobInfo for code and data and its plan.
func newJob(t testing.TB, code, data []byte, blockSize uint64, n, k uint32, out jobs.Output) (*jobs.JobInfo, *jobs.Plan) {
	t.Helper()
	info := &jobs.JobInfo{
		Code:           jobs.Source{URI: "file:///job/code.wasm", SHA256: sha256.Sum256(code)},
		Data:           jobs.Data{Source: jobs.Source{URI: "file:///job/data.bin", SHA256: sha256.Sum256(data)}, Size: uint64(len(data))},
		Slicing:        jobs.Slicing{BlockSize: blockSize, MicroJobs: n, BlocksPerMicro: k},
		SeedCommitment: sha256.Sum256([]byte("microjob test seed")),
		PriceWei:       big.NewInt(1_000_000),
		Creator:        jobs.Address{1, 2, 3},
		Deadline:       2_000_000_000,
		Output:         out,
	}
	info.ApplyDefaults()
	plan, err := jobs.SliceChecked(info, jobs.Seed{0xc1})
	if err != nil {
		t.Fatal(err)
	}
	return info, plan
}

// newPeer returns a fresh peer ID's text.
func newPeer(t testing.TB) string { return p2ptest.NewPeerID(t).String() }

// walletOf derives a distinct wallet text from a name.
func walletOf(name string) string {
	h := sha256.Sum256([]byte(name))
	return "0x" + hex.EncodeToString(h[:20])
}

// rawCID is a CID naming some bytes, for records whose content is not read.
func rawCID(t testing.TB, b []byte) cid.Cid {
	t.Helper()
	sum, err := mh.Sum(b, mh.SHA2_256, -1)
	if err != nil {
		t.Fatal(err)
	}
	return cid.NewCidV1(cid.Raw, sum)
}
