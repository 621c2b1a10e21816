package meshtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/localmesh"
)

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < n; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// readAll checks that every running member reads want under each key.
func readAll(ctx context.Context, m *localmesh.Mesh, want map[string][]byte) error {
	for _, mem := range m.Running() {
		for k, v := range want {
			rec, err := mem.Store.Get(ctx, k)
			if err != nil {
				return fmt.Errorf("member %d: %s: %w", mem.Index, k, err)
			}
			if !bytes.Equal(rec.Payload, v) {
				return fmt.Errorf("member %d: %s: payload differs", mem.Index, k)
			}
		}
	}
	return nil
}

func TestRecordWrittenAnywhereIsReadEverywhere(t *testing.T) {
	m := New(t, localmesh.Options{Processors: 9})
	ctx := context.Background()
	want := map[string][]byte{}
	for _, mem := range m.Members {
		k := fmt.Sprintf("/test/record/%d", mem.Index)
		want[k] = []byte(fmt.Sprintf("written by %s", mem.Host.ID()))
		if err := mem.Store.Put(ctx, k, "test", want[k]); err != nil {
			t.Fatal(err)
		}
	}
	wait.Until(t, 60*time.Second, func() error { return readAll(ctx, m, want) })
	// Every processor's advertisement reached every node too.
	wait.Until(t, 30*time.Second, func() error {
		for _, mem := range m.Members {
			ads, err := mem.Processors(ctx)
			if err != nil {
				return err
			}
			if len(ads) != 9 {
				return fmt.Errorf("member %d sees %d processors", mem.Index, len(ads))
			}
		}
		return nil
	})
}

func TestFileReachesNodesWithNoLinkToItsSource(t *testing.T) {
	m, mn := NewMocknet(t, localmesh.Options{Processors: 9})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	src := m.Members[1]
	// Members 5..9 have no link to the source at all: whatever they get
	// must come from nodes that fetched it before them.
	for _, mem := range m.Members[5:] {
		if err := mn.UnlinkPeers(src.Host.ID(), mem.Host.ID()); err != nil {
			t.Fatal(err)
		}
		_ = mn.DisconnectPeers(src.Host.ID(), mem.Host.ID())
	}
	data := randomBytes(10<<20, 7)
	c, err := src.IPFS.AddFile(ctx, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := src.IPFS.Provide(ctx, c); err != nil {
		t.Fatal(err)
	}
	get := func(i int) {
		t.Helper()
		out := filepath.Join(t.TempDir(), fmt.Sprintf("out-%d", i))
		if err := m.Members[i].IPFS.Get(ctx, c, out); err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("member %d fetched %d bytes, not identical", i, len(got))
		}
	}
	get(2)
	for i := 5; i < len(m.Members); i++ {
		if slices.Contains(m.Members[i].Host.Peers(), src.Host.ID()) {
			t.Fatalf("member %d is connected to the source", i)
		}
		get(i)
	}
}

func TestRestartKeepsIdentityAndStoreAndCatchesUp(t *testing.T) {
	m := New(t, localmesh.Options{Processors: 9})
	ctx := context.Background()
	const down = 4
	before := map[string][]byte{"/test/before": []byte("written before the restart")}
	if err := m.Members[1].Store.Put(ctx, "/test/before", "test", before["/test/before"]); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 60*time.Second, func() error { return readAll(ctx, m, before) })

	id := m.Members[down].Host.ID()
	if err := m.Stop(down); err != nil {
		t.Fatal(err)
	}
	missed := map[string][]byte{}
	for i := 1; i <= 3; i++ {
		k := fmt.Sprintf("/test/while-down/%d", i)
		missed[k] = []byte(k)
		if err := m.Members[i].Store.Put(ctx, k, "test", missed[k]); err != nil {
			t.Fatal(err)
		}
	}
	wait.Until(t, 60*time.Second, func() error { return readAll(ctx, m, missed) })

	if err := m.Restart(ctx, down); err != nil {
		t.Fatal(err)
	}
	mem := m.Members[down]
	if mem.Host.ID() != id {
		t.Fatalf("peer id changed from %s to %s", id, mem.Host.ID())
	}
	// Its own store survived: readable at once, before any sync.
	rec, err := mem.Store.Get(ctx, "/test/before")
	if err != nil || !bytes.Equal(rec.Payload, before["/test/before"]) {
		t.Fatalf("record from before the restart: %v", err)
	}
	wait.Until(t, 60*time.Second, func() error {
		for k, v := range missed {
			rec, err := mem.Store.Get(ctx, k)
			if err != nil {
				return err
			}
			if !bytes.Equal(rec.Payload, v) {
				return errors.New("payload differs")
			}
		}
		return nil
	})
	_ = crdt.ErrNotFound
}
