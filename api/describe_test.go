package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/apiv1"
)

// checkDescription checks GET /v1/jobs/{id}/describe of the settled job j
// on the server at base: the plan, every MicroJob committed and disclosed
// by a processor that the processors map names, the verifiers drawn, the
// records as events in order, no errors; and 404 and 400 for an unknown
// and a malformed ID.
func checkDescription(t *testing.T, base string, j apiv1.Job) {
	t.Helper()
	var d apiv1.JobDescription
	getJSON(t, base+"/v1/jobs/"+j.ID+"/describe", http.StatusOK, &d)
	if d.Job.ID != j.ID || d.Job.State != j.State || d.Job.SettlementTx != j.SettlementTx {
		t.Fatalf("description's summary %+v, want %+v", d.Job, j)
	}
	if d.Plan.MicroJobs != uint64(j.MicroJobs) || d.Plan.MacroJobs != uint64(j.MacroJobs) || d.Plan.Blocks != j.Blocks ||
		d.Plan.PriceWei != j.PriceWei || !d.ChecksDrawn || len(d.MacroJobs) != j.MacroJobs || d.MicroJobsLeftOut != 0 {
		t.Fatalf("plan %+v, checks drawn %v, %d MacroJobs (%d left out)", d.Plan, d.ChecksDrawn, len(d.MacroJobs), d.MicroJobsLeftOut)
	}
	ran := map[string]bool{}
	for p, ms := range d.Processors {
		for _, m := range ms {
			ran[p+" "+m] = true
		}
	}
	micros, verifiers := 0, 0
	for _, m := range d.MacroJobs {
		for _, mj := range m.MicroJobs {
			micros++
			if mj.Verifier {
				verifiers++
			}
			if len(mj.Committed) == 0 || len(mj.Disclosed) == 0 || len(mj.Blocks) == 0 ||
				(mj.State != apiv1.MicroDisclosed && mj.State != apiv1.MicroChecked) {
				t.Fatalf("MicroJob %+v of a settled job", mj)
			}
			for _, p := range mj.Committed {
				if !ran[p+" "+mj.ID] {
					t.Fatalf("MicroJob %s committed by %s, which the processors map does not say", mj.ID, p)
				}
			}
		}
	}
	if micros != j.MicroJobs || verifiers != j.MacroJobs {
		t.Fatalf("%d MicroJobs with %d verifiers listed, want %d with %d", micros, verifiers, j.MicroJobs, j.MacroJobs)
	}
	if len(d.Events) == 0 || d.Events[0].Type != "job" || d.Events[0].Text != "job published" {
		t.Fatalf("first event %+v", d.Events)
	}
	texts := []string{}
	for i, e := range d.Events {
		if i > 0 && e.Time.Before(d.Events[i-1].Time) {
			t.Fatalf("event %d %+v before event %d %+v", i, e, i-1, d.Events[i-1])
		}
		texts = append(texts, e.Text)
	}
	for _, want := range []string{"check seed revealed: the verifier MicroJobs are drawn", "verdict written"} {
		if !slices.Contains(texts, want) {
			t.Fatalf("events lack %q: %v", want, texts)
		}
	}
	if len(d.Errors) != 0 {
		t.Fatalf("errors of a settled job: %v", d.Errors)
	}
	var e api.Error
	getJSON(t, base+"/v1/jobs/"+strings.Repeat("ab", 32)+"/describe", http.StatusNotFound, &e)
	if !strings.Contains(e.Error, "no such job") {
		t.Fatalf("describe of an unknown job: %q", e.Error)
	}
	getJSON(t, base+"/v1/jobs/abc/describe", http.StatusBadRequest, &e)
	if !strings.Contains(e.Error, "job ID") {
		t.Fatalf("describe of a bad job ID: %q", e.Error)
	}
}
