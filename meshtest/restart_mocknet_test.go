package meshtest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ipfs/go-cid"

	"github.com/jobmesh/jobmesh/localmesh"
)

// TestRestartOnMocknet: a member stopped on a mock network is out of
// reach (no peer stays connected to it), and once started again it
// fetches a file added before its restart, and one added after.
func TestRestartOnMocknet(t *testing.T) {
	m, _ := NewMocknet(t, localmesh.Options{Processors: 4})
	WaitConnected(t, m)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const down = 3
	before := randomBytes(4<<20, 1)
	c1, err := m.Members[1].IPFS.AddFile(ctx, bytes.NewReader(before))
	if err != nil {
		t.Fatal(err)
	}
	id := m.Members[down].Host.ID()
	if err := m.Stop(down); err != nil {
		t.Fatal(err)
	}
	for _, mem := range m.Running() {
		if slices.Contains(mem.Host.Network().Peers(), id) || mem.Host.Connect(ctx, mem.Host.Peerstore().PeerInfo(id)) == nil {
			t.Fatalf("member %d reaches the stopped member", mem.Index)
		}
	}
	if err := m.Restart(ctx, down); err != nil {
		t.Fatal(err)
	}
	WaitConnected(t, m)
	after := randomBytes(4<<20, 2)
	c2, err := m.Members[2].IPFS.AddFile(ctx, bytes.NewReader(after))
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range []struct {
		data []byte
		c    cid.Cid
	}{{before, c1}, {after, c2}} {
		out := filepath.Join(t.TempDir(), "out")
		if err := m.Members[down].IPFS.Get(ctx, f.c, out); err != nil {
			t.Fatalf("file %d: %v", i, err)
		}
		got, err := os.ReadFile(out)
		if err != nil || !bytes.Equal(got, f.data) {
			t.Fatalf("file %d: %v, equal %v", i, err, bytes.Equal(got, f.data))
		}
	}
}
