package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/apiv1"
)

// describedJob is a job of one MacroJob with a regular MicroJob disclosed
// by peerA and a verifier committed by peerB, a redo, and a settlement.
func describedJob(id string) apiv1.JobDescription {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return apiv1.JobDescription{
		Job: apiv1.Job{ID: id, State: apiv1.JobSettled, Verified: true, OutputCID: "bafyout", SettlementTx: "0xabc",
			Payouts: map[string]string{"0x01": "600"}, RefundWei: "400", PriceWei: "1000"},
		Plan: apiv1.Plan{DataSize: 300, BlockSize: 100, Blocks: 3, MacroJobs: 1, RegularMicroJobs: 1, VerifierMicroJobs: 1,
			MicroJobs: 2, Replicas: 1, Runs: 2, PriceWei: "1000", PerRunWei: "500"},
		ChecksDrawn: true,
		MacroJobs: []apiv1.MacroJobInfo{{Index: 0, ID: strings.Repeat("c", 64), MicroJobs: []apiv1.MicroJobInfo{
			{ID: strings.Repeat("a", 64), Slot: 0, Blocks: []uint64{0, 1, 2}, State: apiv1.MicroDisclosed, Committed: []string{"peerA"}, Disclosed: []string{"peerA"}},
			{ID: strings.Repeat("b", 64), Slot: 1, Verifier: true, Blocks: []uint64{0, 2}, State: apiv1.MicroRedo, Committed: []string{"peerB"}},
		}}},
		Processors: map[string][]string{"peerA": {strings.Repeat("a", 64)}, "peerB": {strings.Repeat("b", 64)}},
		Events: []apiv1.JobEvent{
			{Time: t0, Type: "job", Peer: "peerC", Text: "job published"},
			{Time: t0.Add(time.Second), Type: "commit", Peer: "peerA", Text: "MicroJob aaaaaaaaaaaa (MacroJob 0) committed"},
		},
		Errors: []string{"MicroJob bbbb: redo ordered by peerA"},
	}
}

// TestJobDescribe: job describe prints the plan, each MicroJob with its
// blocks, state and processors, the MicroJobs by processor, the errors,
// the settlement and the events; --json prints the description; an
// unknown job is exit code 1 with the node's message.
func TestJobDescribe(t *testing.T) {
	id := "abcd" + strings.Repeat("1", 60)
	f := newFakeNode(t, apiv1.Job{ID: id, State: apiv1.JobSettled})
	f.describe = func(int, apiv1.Job) apiv1.JobDescription { return describedJob(id) }
	stdout, stderr, code := cli(t, "job", "describe", "--repo", f.repo, "abcd")
	wantExit(t, stderr, code, exitOK)
	for _, want := range []string{
		"job " + id, "state settled",
		"plan: 300 bytes in 3 blocks of 100 bytes; 1 MacroJobs; 2 MicroJobs (1 regular, 1 verifiers)",
		"price: 1000 wei in escrow, about 500 wei per MicroJob run",
		"MicroJob aaaaaaaaaaaa slot 0 regular  blocks 0-2  disclosed committed by peerA disclosed by peerA",
		"MicroJob bbbbbbbbbbbb slot 1 verifier blocks 0,2  redo      committed by peerB",
		"peerA committed 1: aaaaaaaaaaaa", "errors:\n  MicroJob bbbb: redo ordered by peerA",
		"settlement 0xabc\npayout 0x01 600 wei\nrefund 400 wei",
		"events:\n  2026-01-02T03:04:05.000Z peerC job published\n  2026-01-02T03:04:06.000Z peerA MicroJob aaaaaaaaaaaa (MacroJob 0) committed",
	} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("describe printed\n%s\nwithout %q", stdout, want)
		}
	}
	stdout, stderr, code = cli(t, "job", "describe", "--repo", f.repo, id, "--json")
	wantExit(t, stderr, code, exitOK)
	var d apiv1.JobDescription
	if err := json.Unmarshal([]byte(stdout), &d); err != nil || d.Job.ID != id || len(d.MacroJobs[0].MicroJobs) != 2 {
		t.Fatalf("describe --json: %v\n%s", err, stdout)
	}
	_, stderr, code = cli(t, "job", "describe", "--repo", f.repo, "ffff")
	wantExit(t, stderr, code, exitError, "no job this node knows has an ID starting with ffff")
	_, stderr, code = cli(t, "job", "describe", "--repo", f.repo, "xyz!")
	wantExit(t, stderr, code, exitUsage, `job ID "xyz!": want hex digits`)
}

// TestJobLogs: job logs prints the events so far, one line each with its
// time; --follow prints each new event once as it comes and exits with
// the job's code when it ends.
func TestJobLogs(t *testing.T) {
	id := "abcd" + strings.Repeat("2", 60)
	f := newFakeNode(t, apiv1.Job{ID: id, State: apiv1.JobCancelled})
	full := describedJob(id)
	f.describe = func(n int, j apiv1.Job) apiv1.JobDescription {
		d := full
		d.Job.State = apiv1.JobRunning
		switch n {
		case 0, 1, 2:
			d.Events = full.Events[:1]
		case 3:
		default:
			d.Job.State = apiv1.JobCancelled
			d.Events = append(full.Events, apiv1.JobEvent{Time: full.Events[1].Time.Add(time.Second), Type: "cancel", Peer: "peerC", Text: "cancelled by the creator"})
		}
		return d
	}
	stdout, stderr, code := cli(t, "job", "logs", "--repo", f.repo, id)
	wantExit(t, stderr, code, exitOK)
	if stdout != "2026-01-02T03:04:05.000Z peerC job published\n" {
		t.Fatalf("logs printed %q", stdout)
	}
	// The second call was the logs above; --follow reads the rest.
	f.describes.Store(1)
	stdout, stderr, code = cli(t, "job", "logs", "--repo", f.repo, "--follow", "abcd")
	wantExit(t, stderr, code, exitCancelled, "job "+id+" was cancelled")
	want := "2026-01-02T03:04:05.000Z peerC job published\n" +
		"2026-01-02T03:04:06.000Z peerA MicroJob aaaaaaaaaaaa (MacroJob 0) committed\n" +
		"2026-01-02T03:04:07.000Z peerC cancelled by the creator\n" +
		"job " + id + " cancelled\n"
	if stdout != want {
		t.Fatalf("logs --follow printed\n%s\nwant\n%s", stdout, want)
	}
}
