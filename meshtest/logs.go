package meshtest

import (
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
)

// tailLines is how many of a mesh's latest log lines a failed test
// prints.
const tailLines = 300

// TestLogger returns the logger of a test's mesh and a function to call
// before the mesh closes:
//   - with JOBMESH_TEST_LOG_DIR set, a logger at JOBMESH_TEST_LOG's level
//     (debug by default) writing to a file of the test's own in that
//     directory: a whole package's run leaves one log per mesh to read
//     after a failure;
//   - with JOBMESH_TEST_LOG set, Logger;
//   - otherwise the mesh's info records are kept in memory, and a test
//     that failed prints the latest tailLines of them: a failure seen
//     only once under load says what the mesh was doing.
func TestLogger(t testing.TB) (*slog.Logger, func()) {
	dir := os.Getenv("JOBMESH_TEST_LOG_DIR")
	if dir == "" && os.Getenv("JOBMESH_TEST_LOG") != "" {
		return Logger(), func() {}
	}
	if dir == "" {
		tail := &lineRing{lines: make([]string, tailLines)}
		return slog.New(slog.NewTextHandler(tail, nil)), func() {
			if t.Failed() {
				t.Logf("the mesh's latest log lines:\n%s", tail.String())
			}
		}
	}
	level := slog.LevelDebug
	if s := os.Getenv("JOBMESH_TEST_LOG"); s != "" {
		if err := level.UnmarshalText([]byte(s)); err != nil {
			t.Fatalf("JOBMESH_TEST_LOG: %v", err)
		}
	}
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == os.PathSeparator || r == ' ' {
			return '_'
		}
		return r
	}, t.Name())
	f, err := os.CreateTemp(dir, name+"-*.log")
	if err != nil {
		t.Fatalf("JOBMESH_TEST_LOG_DIR: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: level})), func() {}
}

// lineRing keeps the latest lines written to it (slog's text handler
// writes one record per Write).
type lineRing struct {
	mu    sync.Mutex
	lines []string
	next  int
	full  bool
}

func (r *lineRing) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines[r.next] = strings.TrimSuffix(string(p), "\n")
	r.next = (r.next + 1) % len(r.lines)
	r.full = r.full || r.next == 0
	return len(p), nil
}

// String returns the kept lines, oldest first.
func (r *lineRing) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := r.lines[:r.next]
	if r.full {
		kept = append(append([]string(nil), r.lines[r.next:]...), r.lines[:r.next]...)
	}
	return strings.Join(kept, "\n")
}
