// Package meshtest is the N-node harness that jobmesh's tests share: a
// whole mesh in the test process (localmesh) on 127.0.0.1 sockets or on a
// libp2p mock network whose links a test can cut, closed when the test ends.
package meshtest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	mocknet "github.com/libp2p/go-libp2p/p2p/net/mock"

	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/localmesh"
)

// Logger returns a logger for a test mesh: silent, or on stderr from the
// level JOBMESH_TEST_LOG names (debug, info, warn or error).
func Logger() *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(os.Getenv("JOBMESH_TEST_LOG"))); err != nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// New starts a mesh on 127.0.0.1 sockets; opts.Dir defaults to a test
// temp dir. The mesh is closed when the test ends.
func New(t testing.TB, opts localmesh.Options) *localmesh.Mesh {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	tail := func() {}
	if opts.Logger == nil {
		opts.Logger, tail = TestLogger(t)
	}
	m, err := localmesh.Start(context.Background(), opts)
	if err != nil {
		t.Error(err)
		tail()
		t.FailNow()
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("closing mesh: %v", err)
		}
	})
	t.Cleanup(tail) // before the mesh closes
	return m
}

// NewMocknet starts a mesh on a mock network, every host linked to every
// other; cut links with the returned Mocknet's UnlinkPeers.
func NewMocknet(t testing.TB, opts localmesh.Options) (*localmesh.Mesh, mocknet.Mocknet) {
	t.Helper()
	mn := mocknet.New()
	t.Cleanup(func() { mn.Close() })
	opts.Mocknet = mn
	return New(t, opts), mn
}

// WaitConnected waits until every running member has at least one peer.
func WaitConnected(t testing.TB, m *localmesh.Mesh) {
	t.Helper()
	wait.Until(t, 30*time.Second, func() error {
		for _, mem := range m.Running() {
			if len(mem.Host.Peers()) == 0 {
				return fmt.Errorf("member %d has no peers", mem.Index)
			}
		}
		return nil
	})
}
