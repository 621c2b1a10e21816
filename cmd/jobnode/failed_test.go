package main

import (
	"strings"
	"testing"

	"github.com/jobmesh/jobmesh/apiv1"
)

// TestFailedJobExits: job wait and job status on a failed job exit 3 and
// say why, with the module's stderr; --json prints the failure too.
func TestFailedJobExits(t *testing.T) {
	id := strings.Repeat("a", 64)
	micro := strings.Repeat("b", 64)
	f := newFakeNode(t, apiv1.Job{ID: id, State: apiv1.JobFailed, Failure: &apiv1.JobFailure{
		Kind: "exit", Micro: micro, ExitCode: 2, Reason: "the job's code exited with code 2 (exit)",
		Stderr: "panic: bad record\n", Reports: []string{"peerA", "peerB"},
	}})
	for _, cmd := range []string{"wait", "status"} {
		for _, json := range []bool{false, true} {
			args := []string{"job", cmd, "--repo", f.repo, id[:8]}
			if json {
				args = append(args, "--json")
			}
			stdout, stderr, code := cli(t, args...)
			wantExit(t, stderr, code, exitFailed, "job "+id+" failed: the job's code exited with code 2 (exit)", `stderr: "panic: bad record\n"`)
			want := []string{"state failed", "failure exit", "microjob " + micro, "reported by peerA peerB", "stderr:\npanic: bad record"}
			if json {
				want = []string{`"state": "failed"`, `"kind": "exit"`, `"stderr": "panic: bad record\n"`}
			}
			for _, w := range want {
				if !strings.Contains(stdout, w) {
					t.Fatalf("job %s (json %v) printed no %q:\n%s", cmd, json, w, stdout)
				}
			}
		}
	}
}
