package processor_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshclient"
	"github.com/jobmesh/jobmesh/records"
)

// trapModule is a WASI command whose _start hits unreachable at once.
func trapModule() []byte {
	sec := func(id byte, body ...byte) []byte { return append([]byte{id, byte(len(body))}, body...) }
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, sec(1, 0x01, 0x60, 0x00, 0x00)...) // type 0: () -> ()
	m = append(m, sec(3, 0x01, 0x00)...)             // function 0 of type 0
	m = append(m, sec(7, 0x01, 0x06, '_', 's', 't', 'a', 'r', 't', 0x00, 0x00)...)
	m = append(m, sec(10, 0x01, 0x03, 0x00, 0x00, 0x0b)...) // unreachable; end
	return m
}

// TestInvalidModuleFails: a job whose code is not WebAssembly (submitted
// through the DApp client, which does not check it) reaches the failed
// state with reason invalid-module, on the DApp's Wait and on the API,
// and the failure settlement credits the whole escrow back to the
// creator.
func TestInvalidModuleFails(t *testing.T) {
	failsWith(t, []byte("these words are not WebAssembly\n"), records.FailInvalidModule)
}

// TestTrappingModuleFails: a module that traps on every block fails the
// job with reason trap, and refunds it.
func TestTrappingModuleFails(t *testing.T) {
	failsWith(t, trapModule(), records.FailTrap)
}

// apiJob is GET /v1/jobs/{id} on mem's API.
func apiJob(ctx context.Context, t *testing.T, mem *localmesh.Member, id jobs.ID) apiv1.Job {
	t.Helper()
	srv := httptest.NewServer(api.NewHandler(mem.Node.APIDeps(), mem.Node.Config.API))
	defer srv.Close()
	j, err := meshclient.New(srv.URL).Job(ctx, id.String())
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// submitFailing submits spec from m's client and waits for the job to
// fail: Wait must end with a *dapp.FailedError of kind kind.
func submitFailing(ctx context.Context, t *testing.T, m *localmesh.Mesh, spec dapp.Spec, kind string) (*jobs.JobInfo, *dapp.FailedError) {
	t.Helper()
	c := client(m)
	info, err := c.DApp.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.DApp.Wait(ctx, info.ID(), 100*time.Millisecond)
	var fe *dapp.FailedError
	if !errors.Is(err, dapp.ErrFailed) || !errors.As(err, &fe) || fe.Failure.Kind != kind || fe.Failure.Reason == "" {
		t.Fatalf("Wait: %v, want failed %s", err, kind)
	}
	return info, fe
}

func failsWith(t *testing.T, code []byte, kind string) {
	m := chainMesh(t, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	spec := newMandelbrot(t, 192, 160, 32).spec(3, 4)
	spec.Code = code
	c := client(m)
	info, fe := submitFailing(ctx, t, m, spec, kind)
	id := info.ID()
	if len(fe.Failure.Reports) < 2 {
		t.Fatalf("failure %+v, want it reported by 2 or more", fe.Failure)
	}
	// The refund: a failure settlement (zero resultRoot) paying nobody,
	// the whole amount credited to the creator.
	rel := fe.Release
	if rel == nil || rel.ResultRoot != (common.Hash{}) || rel.Refund.Cmp(info.PriceWei) != 0 {
		t.Fatalf("release %+v, want a failure settlement refunding %v", rel, info.PriceWei)
	}
	for i, a := range rel.Amounts {
		if a.Sign() != 0 {
			t.Fatalf("payee %s paid %v", rel.Payees[i], a)
		}
	}
	credit, err := m.Escrow.CreditOf(ctx, c.Wallet)
	if err != nil {
		t.Fatal(err)
	}
	if credit.Cmp(info.PriceWei) != 0 {
		t.Fatalf("creator's credit %v, want the job's amount %v", credit, info.PriceWei)
	}
	ej, err := m.Escrow.Job(ctx, escrow.JobKey(common.Address(info.Creator), common.Hash(id)))
	if err != nil || ej.State != escrow.JobSettled {
		t.Fatalf("job on chain %+v, %v", ej, err)
	}
	// The API says failed, with the reason.
	if j := apiJob(ctx, t, c, id); j.State != apiv1.JobFailed || j.Failure == nil || j.Failure.Kind != kind || j.Failure.Reason != fe.Failure.Reason ||
		j.RefundWei != info.PriceWei.String() {
		t.Fatalf("GET /v1/jobs/{id}: state %s, failure %+v, refund %s", j.State, j.Failure, j.RefundWei)
	}
	// No MicroJob of the job was committed.
	recs, err := c.Store.Query(ctx, records.JobKey(id)+"/")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Type == records.CommitType {
			t.Fatalf("a commitment of a failed job: %s", r.Key)
		}
	}
}

// TestFakeFailureReportsDoNotFailJob: a colluding pair writes failure
// reports of a job that runs: the others run the MicroJob they name, it
// succeeds, and the job is verified and settled as any other.
func TestFakeFailureReportsDoNotFailJob(t *testing.T) {
	m := chainMesh(t, 4, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	job := newMandelbrot(t, 192, 160, 32)
	c := client(m)
	info, plan := submitPlan(t, ctx, m, job.spec(3, 4))
	micro := plan.Macros[0].Micros[0].ID
	for _, liar := range processorsOf(m)[:2] {
		rep := records.NewFailureReport(info.ID(), micro, records.Failure{Kind: records.FailTrap, Stderr: "fake"})
		if err := crdt.PutJSON(ctx, liar.Store, records.FailureKey(info.ID(), liar.Host.ID().String()), records.FailureType, rep); err != nil {
			t.Fatal(err)
		}
	}
	res, err := c.DApp.Wait(ctx, info.ID(), 100*time.Millisecond)
	if err != nil {
		t.Fatalf("job %s: %v", info.ID(), err)
	}
	checkComplete(t, info, res)
	checkRelease(t, m, info, res)
	for _, mem := range processorsOf(m) {
		if n := counterSum(t, mem.Metrics, "jobmesh_processor_jobs_failed_total"); n != 0 {
			t.Fatalf("processor %d found the job failed", mem.Index)
		}
	}
	// The pair's reports agree, and are all there are: the honest
	// processors' runs of the MicroJob succeeded.
	reports, err := records.ReadFailures(ctx, c.Store, info.ID())
	if err != nil || len(reports) != 2 {
		t.Fatalf("failure reports %+v, %v; want the pair's two", reports, err)
	}
	if j := apiJob(ctx, t, c, info.ID()); j.State != apiv1.JobSettled || j.Failure != nil {
		t.Fatalf("GET /v1/jobs/{id}: state %s, failure %+v; want settled", j.State, j.Failure)
	}
}

// TestNoProcessorFails: a job no processor joins before its deadline (it
// asks for a card none has) is refunded by its creator's node and fails
// with reason no-eligible-processor.
func TestNoProcessorFails(t *testing.T) {
	m := chainMesh(t, 2, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	spec := newMandelbrot(t, 192, 160, 32).spec(3, 4)
	spec.Deadline = time.Now().Add(10 * time.Second) // past the quiet period the contract asks for
	spec.Requirements = jobs.Requirements{GPUModel: "no-such-card", MinVRAMMiB: 1 << 20}
	c := client(m)
	info, _ := submitFailing(ctx, t, m, spec, records.FailNoProcessor)
	credit, err := m.Escrow.CreditOf(ctx, c.Wallet)
	if err != nil || credit.Cmp(info.PriceWei) != 0 {
		t.Fatalf("creator's credit %v (%v), want the job's amount %v", credit, err, info.PriceWei)
	}
	if j := apiJob(ctx, t, c, info.ID()); j.State != apiv1.JobFailed || j.Failure == nil || j.Failure.Kind != records.FailNoProcessor {
		t.Fatalf("GET /v1/jobs/{id}: state %s, failure %+v", j.State, j.Failure)
	}
}

// TestFailedWithoutChain: on a mesh without a chain the failed state is
// reached all the same, with no refund to make.
func TestFailedWithoutChain(t *testing.T) {
	m := flowMesh(t, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	spec := newMandelbrot(t, 192, 160, 32).spec(3, 4)
	spec.Code = []byte("\x00asm but not a module")
	c := client(m)
	info, fe := submitFailing(ctx, t, m, spec, records.FailInvalidModule)
	if fe.Release != nil {
		t.Fatalf("a release %+v without a chain", fe.Release)
	}
	if j := apiJob(ctx, t, c, info.ID()); j.State != apiv1.JobFailed || j.Failure == nil || j.Failure.Kind != records.FailInvalidModule {
		t.Fatalf("GET /v1/jobs/{id}: state %s, failure %+v", j.State, j.Failure)
	}
}
