package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/node"
)

// chainProcessor starts a mesh with one processor and the dev chain and
// returns the processor.
func chainProcessor(t *testing.T) *localmesh.Member {
	t.Helper()
	m := meshtest.New(t, localmesh.Options{Processors: 1, Chain: &localmesh.ChainOptions{}})
	for _, mem := range m.Running() {
		if mem.Role == node.RoleProcessor {
			return mem
		}
	}
	t.Fatal("the mesh runs no processor")
	return nil
}

// TestOperatorView: GET /v1/operator reports the node's role, resources,
// its wallet's earnings once read from the chain, and a warning it
// logged, with its attributes.
func TestOperatorView(t *testing.T) {
	proc := chainProcessor(t)
	srv := httptest.NewServer(nodeHandler(proc.Node))
	defer srv.Close()
	proc.Log.Warn("disk nearly full", "free", "1%")
	proc.Log.Info("not a warning")

	var op apiv1.Operator
	wait.Until(t, 30*time.Second, func() error {
		resp, body := get(t, srv.URL+"/v1/operator")
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET /v1/operator: %d %s", resp.StatusCode, body)
		}
		op = apiv1.Operator{}
		if err := json.Unmarshal(body, &op); err != nil {
			return err
		}
		if op.Earnings == nil {
			return fmt.Errorf("no earnings read yet")
		}
		return nil
	})
	if op.Role != "processor" || op.UptimeSeconds <= 0 || op.CPUs < 1 || op.MemoryBytes == 0 || op.HeapBytes == 0 || op.Goroutines < 1 {
		t.Errorf("operator view %+v", op)
	}
	if op.CPUSeconds <= 0 && op.CPUSeconds != -1 {
		t.Errorf("cpu_s = %v", op.CPUSeconds)
	}
	if e := op.Earnings; e.Wallet != fmt.Sprintf("%#x", proc.Wallet) || e.CreditedWei != "0" || e.WithdrawnWei != "0" || e.CreditWei != "0" || e.ReadAt.IsZero() {
		t.Errorf("earnings %+v of a wallet that earned nothing (%#x)", e, proc.Wallet)
	}
	found := false
	for _, w := range op.Warnings {
		if w.Message == "not a warning" {
			t.Errorf("an INFO record is listed: %+v", w)
		}
		if w.Message == "disk nearly full" {
			found = w.Level == "WARN" && w.Attrs["free"] == "1%" && w.Attrs["role"] == "processor"
		}
	}
	if !found {
		t.Errorf("the warning is not listed as logged: %+v", op.Warnings)
	}
}
