package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
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
	// Live, stake 1 (no chain), Q = (2·1 + 1 + 0)/4 = 0.75, W = 0.75/1.75.
	if f := strings.Fields(row); !strings.Contains(out, "WEIGHT") || len(f) < 12 || f[7] != "yes" || f[8] != "1" || f[9] != "0.750" || f[10] != "0.4286" || f[11] != "-" {
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
