package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/records"
)

// checkFailedJob: a job whose code is not WebAssembly (submitted by the
// DApp client itself, which does not check it as the API does) fails
// with its reason, the same on GET /v1/jobs/{id}, in its description and
// on the dashboard, and its escrow goes back to the creator on chain.
func checkFailedJob(t *testing.T, m *localmesh.Mesh, client *localmesh.Member, base string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	before, err := m.Escrow.CreditOf(ctx, client.Wallet)
	if err != nil {
		t.Fatal(err)
	}
	spec := newMandelbrot(t).spec(big.NewInt(3_000_000_000))
	spec.Code = []byte("these words are not WebAssembly\n")
	info, err := client.DApp.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID().String()
	_, err = client.DApp.Wait(ctx, info.ID(), 100*time.Millisecond)
	var fe *dapp.FailedError
	if !errors.As(err, &fe) || fe.Failure.Kind != records.FailInvalidModule {
		t.Fatalf("Wait: %v, want failed %s", err, records.FailInvalidModule)
	}

	var j apiv1.Job
	getJSON(t, base+"/v1/jobs/"+id, http.StatusOK, &j)
	if j.State != apiv1.JobFailed || j.Failure == nil || j.Failure.Kind != records.FailInvalidModule ||
		!strings.Contains(j.Failure.Reason, "not a runnable WebAssembly module") || j.RefundWei != info.PriceWei.String() {
		t.Fatalf("GET /v1/jobs/{id}: state %s, failure %+v, refund %s", j.State, j.Failure, j.RefundWei)
	}
	var d apiv1.JobDescription
	getJSON(t, base+"/v1/jobs/"+id+"/describe", http.StatusOK, &d)
	if d.Job.State != apiv1.JobFailed || d.Job.Failure == nil || d.Job.Failure.Reason != j.Failure.Reason {
		t.Fatalf("describe: state %s, failure %+v", d.Job.State, d.Job.Failure)
	}
	reported := 0
	for _, e := range d.Events {
		if strings.Contains(e.Text, "failed here: "+records.FailInvalidModule) {
			reported++
		}
	}
	if reported < 2 {
		t.Fatalf("describe lists %d failure reports among its events, want 2 or more", reported)
	}

	// The refund is on chain: the creator's credit grew by the escrow.
	after, err := m.Escrow.CreditOf(ctx, client.Wallet)
	if err != nil {
		t.Fatal(err)
	}
	if got := new(big.Int).Sub(after, before); got.Cmp(info.PriceWei) != 0 {
		t.Fatalf("the creator's credit grew by %v, want the escrow %v", got, info.PriceWei)
	}

	b := startBrowser(t, 1280, 800)
	b.navigate(base + "/ui/#job=" + id)
	type shown struct{ Row, State, Kind, Reason string }
	var st shown
	wait.Until(t, time.Minute, func() error {
		if err := json.Unmarshal(b.eval(`(() => {
			const row = document.querySelector('tr.job[data-job="`+id+`"]');
			if (row && document.getElementById("detail-id").textContent !== "`+id+`") row.click();
			const f = document.querySelector("#detail-fields .failure");
			const s = document.querySelector("#detail-fields .state");
			return {Row: row ? row.dataset.state : "", State: s ? s.textContent : "",
				Kind: f ? f.dataset.kind : "", Reason: f ? f.querySelector(".failure-reason").textContent : ""};
		})()`), &st); err != nil {
			return err
		}
		if st.Row != string(apiv1.JobFailed) || st.State != string(apiv1.JobFailed) || st.Kind == "" {
			return fmt.Errorf("dashboard: %+v", st)
		}
		return nil
	})
	if st.Kind != records.FailInvalidModule || st.Reason != j.Failure.Reason {
		t.Fatalf("the dashboard shows failure %q: %q, want %q: %q", st.Kind, st.Reason, records.FailInvalidModule, j.Failure.Reason)
	}
}
