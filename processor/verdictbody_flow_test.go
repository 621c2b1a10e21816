package processor_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

// bodyTune makes every verdict go out of line.
func bodyTune(_ *localmesh.Member, pc *processor.Config) { pc.MaxInlineVerdict = 1 }

// checkBodyRecord checks that the job's verdict record in the client's
// replica keeps its verdict in a body, and that the body holds the verdict
// the client's DApp returned.
func checkBodyRecord(t *testing.T, m *localmesh.Mesh, info *jobs.JobInfo, verdict []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	chosen, err := finish.ReadVerdict(ctx, client(m).Store, client(m).IPFS, info.ID(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := client(m).Store.Get(ctx, records.VerdictKey(info.ID(), chosen.Author))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := records.DecodeVerdictRecord(r.Payload); !errors.Is(err, records.ErrBodyNotFetched) {
		t.Fatalf("verdict record is not a body record (%v): %s", err, r.Payload)
	}
	rec, v, err := records.LoadVerdictRecord(ctx, r.Payload, client(m).IPFS)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Body == "" || !bytes.Equal(v.Encode(), verdict) {
		t.Fatal("body verdict differs from the DApp's")
	}
}

// TestJobEndToEndVerdictBody: with every verdict out of line, the job
// completes, the client's DApp gets the verdict from the body and the
// output matches a local run.
func TestJobEndToEndVerdictBody(t *testing.T) {
	m := flowMesh(t, 3, bodyTune)
	job := newMandelbrot(t, 128, 96, 32) // 4×3 = 12 tiles
	info, res := runJob(t, m, job.spec(3, 2), 3*time.Minute)
	checkComplete(t, info, res)
	if len(res.Culprits) != 0 {
		t.Fatalf("culprits in an honest mesh: %v", res.Culprits)
	}
	if got, want := output(t, m, res, info.Output.Kind), job.Local(t); !bytes.Equal(got, want) {
		t.Fatalf("mesh output (%d bytes) differs from the local run (%d bytes)", len(got), len(want))
	}
	checkBodyRecord(t, m, info, res.Verdict.Encode())
}

// TestJobSettlesOnChainVerdictBody: payees derive the settlement from a
// verdict body and the escrow pays the split by speed.
func TestJobSettlesOnChainVerdictBody(t *testing.T) {
	m := chainMesh(t, 3, bodyTune)
	job := newMandelbrot(t, 128, 96, 32)
	info, res := runJob(t, m, job.spec(3, 2), 3*time.Minute)
	checkComplete(t, info, res)
	checkRelease(t, m, info, res)
	checkSpeedSplit(t, m, info, res)
	checkBodyRecord(t, m, info, res.Verdict.Encode())
}
