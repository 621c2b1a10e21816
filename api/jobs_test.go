package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/examples"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/node"
)

func getJSON(t *testing.T, url string, want int, out any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("GET %s: status %d, want %d", url, resp.StatusCode, want)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// TestJobEndpoints follows one job through GET /v1/jobs/{id} on the
// submitting node until it is settled on chain, and checks its summary.
func TestJobEndpoints(t *testing.T) {
	m := meshtest.New(t, localmesh.Options{
		Processors: 3, Clients: 1, Chain: &localmesh.ChainOptions{},
		Timers: localmesh.Timers{Poll: 200 * time.Millisecond, DiscloseGrace: 2 * time.Second},
	})
	var client, boot, proc *localmesh.Member
	for _, mem := range m.Running() {
		switch mem.Role {
		case node.RoleClient:
			client = mem
		case node.RoleBootstrap:
			boot = mem
		case node.RoleProcessor:
			proc = mem
		}
	}
	srv := httptest.NewServer(nodeHandler(client.Node))
	defer srv.Close()
	bootSrv := httptest.NewServer(nodeHandler(boot.Node))
	defer bootSrv.Close()
	procSrv := httptest.NewServer(nodeHandler(proc.Node))
	defer procSrv.Close()

	ctx := context.Background()
	price := big.NewInt(3_000_000_000)
	info := submitWordcount(t, ctx, client, price)
	id := info.ID().String()

	var j apiv1.Job
	wait.Until(t, 3*time.Minute, func() error {
		getJSON(t, srv.URL+"/v1/jobs/"+id, http.StatusOK, &j)
		if j.State != apiv1.JobSettled {
			return fmt.Errorf("job is %s (%d/%d committed)", j.State, j.Committed, j.MicroJobs)
		}
		return nil
	})
	checkSettledSummary(t, j, price)
	checkDescription(t, srv.URL, j)

	// Any node that holds the job's records derives the same summary from
	// its replica; only Mine differs.
	var list []apiv1.Job
	wait.Until(t, time.Minute, func() error {
		getJSON(t, procSrv.URL+"/v1/jobs", http.StatusOK, &list)
		if len(list) != 1 || list[0].State != apiv1.JobSettled {
			return fmt.Errorf("a processor lists %+v", list)
		}
		return nil
	})
	if got := list[0]; got.Mine || got.ID != id || got.OutputCID != j.OutputCID || got.Committed != j.Committed ||
		got.SettlementTx != j.SettlementTx {
		t.Fatalf("a processor's summary %+v differs from the client's %+v", got, j)
	}
	// The bootstrap node has no chain, so it keeps no job stores and can
	// check no outcome summary: it knows the job from its announcement
	// and claims no outcome.
	var bootList []apiv1.Job
	getJSON(t, bootSrv.URL+"/v1/jobs", http.StatusOK, &bootList)
	if len(bootList) != 1 || bootList[0].ID != id || bootList[0].Verified || bootList[0].OutputCID != "" || bootList[0].Committed != 0 {
		t.Fatalf("the bootstrap node lists %+v", bootList)
	}

	// A concat job's output is bytes, and it has no tile picture.
	resp, body := get(t, srv.URL+"/v1/jobs/"+id+"/output")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/octet-stream" ||
		len(body) == 0 || resp.Header.Get("X-Content-CID") != j.OutputCID {
		t.Fatalf("concat output: %d %q, %d bytes, CID %q", resp.StatusCode, resp.Header.Get("Content-Type"), len(body), resp.Header.Get("X-Content-CID"))
	}
	var e api.Error
	getJSON(t, srv.URL+"/v1/jobs/"+id+"/tiles.png", http.StatusNotFound, &e)
	if !strings.Contains(e.Error, "not png-grid") {
		t.Fatalf("tiles of a concat job: %q", e.Error)
	}
	getJSON(t, srv.URL+"/v1/jobs/"+strings.Repeat("ab", 32), http.StatusNotFound, &e)
	if !strings.Contains(e.Error, "no such job") {
		t.Fatalf("unknown job: %q", e.Error)
	}
	getJSON(t, srv.URL+"/v1/jobs/not-a-job-id", http.StatusBadRequest, &e)
	if !strings.Contains(e.Error, "job ID") {
		t.Fatalf("bad job ID: %q", e.Error)
	}
}

// submitWordcount submits, from mem, a word count of a short text in
// four blocks (two MicroJobs of two blocks each) at price.
func submitWordcount(t *testing.T, ctx context.Context, mem *localmesh.Member, price *big.Int) *jobs.JobInfo {
	t.Helper()
	code, err := examples.Build(ctx, "wordcount")
	if err != nil {
		t.Fatal(err)
	}
	info, err := mem.DApp.Submit(ctx, dapp.Spec{
		Code: code, Data: []byte(strings.Repeat("the quick brown fox jumps over the lazy dog\n", 40)),
		Slicing:  jobs.Slicing{BlockSize: 128, MicroJobs: 2, BlocksPerMicro: 2},
		Price:    price,
		Deadline: time.Now().Add(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// checkSettledSummary checks the summary j of a settled job of the given
// price: verified, complete, every MicroJob credited, and payouts plus
// refund equal to the price.
func checkSettledSummary(t *testing.T, j apiv1.Job, price *big.Int) {
	t.Helper()
	if !j.Mine || !j.Verified || len(j.Culprits) != 0 || j.OutputCID == "" || j.SettlementTx == "" {
		t.Fatalf("settled job summary: %+v", j)
	}
	if j.Committed != j.MicroJobs || j.Disclosed != j.MicroJobs || j.MacroJobs == 0 {
		t.Fatalf("progress %d committed, %d disclosed of %d MicroJobs", j.Committed, j.Disclosed, j.MicroJobs)
	}
	if len(j.VerifierHashes) != j.MacroJobs || len(j.VerifierDigest) != 64 {
		t.Fatalf("verifier hashes %v, digest %q", j.VerifierHashes, j.VerifierDigest)
	}
	credited := 0
	for _, n := range j.ByProcessor {
		credited += n
	}
	// Every MicroJob is credited at least once; one run twice (a lock
	// expired under load) is credited to both processors.
	if credited < j.MicroJobs {
		t.Fatalf("%d MicroJobs credited by processor, want at least %d", credited, j.MicroJobs)
	}
	total, ok := new(big.Int).SetString(j.RefundWei, 10)
	if !ok {
		t.Fatalf("refund %q", j.RefundWei)
	}
	for w, a := range j.Payouts {
		v, ok := new(big.Int).SetString(a, 10)
		if !ok || v.Sign() <= 0 {
			t.Fatalf("payout to %s: %q", w, a)
		}
		total.Add(total, v)
	}
	if total.Cmp(price) != 0 || j.PriceWei != price.String() {
		t.Fatalf("payouts + refund = %v, escrow %v (%s)", total, price, j.PriceWei)
	}
}
