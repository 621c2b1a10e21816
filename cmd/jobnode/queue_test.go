package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/meshclient"
)

// TestNodesAndQueueCommands: against a bootstrap and a processor daemon,
// `jobnode nodes` shows the processor live with its stake, QoS and weight,
// and `jobnode queue` the (empty) queue with its cap.
func TestNodesAndQueueCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process mesh in -short mode")
	}
	root := t.TempDir()
	boot, p1 := filepath.Join(root, "boot"), filepath.Join(root, "p1")
	initRepo(t, boot)
	initRepo(t, p1, "--card-model", "rtx4090", "--vram-mib", "24576")
	db := startDaemon(t, "bootstrap", boot)
	var id api.ID
	if err := json.Unmarshal([]byte(run(t, "id", "--repo", boot, "--json")), &id); err != nil {
		t.Fatal(err)
	}
	d1 := startDaemon(t, "process", p1, "--bootstrap", id.Addrs[0])
	pid := strings.Fields(run(t, "id", "--repo", p1))[0]

	c, err := meshclient.ForRepo(boot)
	if err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 60*time.Second, func() error {
		dn, err := c.DispatchNodes(context.Background())
		if err != nil {
			return err
		}
		if dn.Live != 1 {
			return fmt.Errorf("%d live processors", dn.Live)
		}
		return nil
	})
	out := run(t, "nodes", "--repo", boot)
	var row string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, pid) {
			row = l
		}
	}
	// Live, stake 1 (no chain), Q = (2·B + R + P)/4 = (2·1 + 1 + 0)/4 =
	// 0.75, W = 0.75/1.75, no timeouts in the window, not kicked.
	want := []string{"yes", "1", "0.750", "1.000", "0.000", "1.000", "0.4286", "0/3", "-", "-"}
	// The last column, SPEED AT, depends on whether a probe ended yet.
	if f := strings.Fields(row); !strings.Contains(out, "TIMEOUT SCORE") || len(f) != 8+len(want) || !slices.Equal(f[7:7+len(want)], want) {
		t.Fatalf("nodes table:\n%s", out)
	}
	var q api.Queue
	if err := json.Unmarshal([]byte(run(t, "queue", "--repo", boot, "--json")), &q); err != nil {
		t.Fatal(err)
	}
	if q.Live != 1 || q.Cap != 64 || len(q.Groups) != 0 {
		t.Fatalf("queue %+v", q)
	}
	if out := run(t, "queue", "--repo", boot); !strings.Contains(out, "1 live processors, cap 64") {
		t.Fatalf("queue table:\n%s", out)
	}
	d1.stop(t)
	db.stop(t)
}

// TestDispatchColumns: a processor's columns show its QoS parts, the
// timeouts in its window, and its kick with when it took effect; one
// that is not live shows a dash in each.
func TestDispatchColumns(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	dn := api.DispatchNodes{Live: 2, TimeoutWindow: 3, Processors: []api.DispatchNode{
		{PeerID: "ok", StakeWei: "1", QoS: 0.75, VRAMScore: 1, TimeoutScore: 0, SpeedScore: 1, Weight: 0.75 / 1.75, Timeouts: 1, SpeedAt: &at},
		{PeerID: "out", StakeWei: "5", QoS: 0.5, VRAMScore: 0.5, TimeoutScore: 0.25, SpeedScore: 0.625, Kicked: "timeouts", KickedAt: &at, Timeouts: 2},
	}}
	for _, c := range []struct{ peer, want string }{
		{"ok", "yes 1 0.750 1.000 0.000 1.000 0.4286 1/3 - - 2026-01-02T03:04:05Z"},
		{"out", "yes 5 0.500 0.500 0.250 0.625 0.0000 2/3 timeouts 2026-01-02T03:04:05Z -"},
		{"gone", "no - - - - - - - - - -"},
	} {
		if got := strings.ReplaceAll(dispatchColumns(dn, c.peer), "\t", " "); got != c.want {
			t.Errorf("%s: %q, want %q", c.peer, got, c.want)
		}
	}
	if n := strings.Count(dispatchHeader, "\t"); n != strings.Count(dispatchColumns(dn, "ok"), "\t") {
		t.Errorf("header has %d tabs, the columns %d", n, strings.Count(dispatchColumns(dn, "ok"), "\t"))
	}
}
