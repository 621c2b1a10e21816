package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/apiv1"
)

// TestNoteWaiting: while the node reads content by URI, job submit says
// at each tick what it waits for, the time so far and the limit; nothing
// after stop, and nothing at all for local files.
func TestNoteWaiting(t *testing.T) {
	var out bytes.Buffer
	ticks := make(chan time.Time)
	req := apiv1.SubmitRequest{Code: apiv1.Source{URI: "ipfs://bafycode"}, Data: apiv1.Source{URI: "ipfs://bafydata"}}
	stop := noteWaiting(&out, remoteSources("code.wasm", "ipfs://bafydata", req), 2*time.Minute, ticks)
	ticks <- time.Now().Add(10 * time.Second)
	ticks <- time.Now().Add(15 * time.Second)
	stop()
	stop()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || lines[0] != "waiting for the node to read --data ipfs://bafydata: 10s so far, at most 2m0s (--fetch-timeout)" ||
		!strings.HasPrefix(lines[1], "waiting for the node to read --data ipfs://bafydata: 15s so far") {
		t.Fatalf("noted %q", out.String())
	}
	out.Reset()
	noteWaiting(&out, remoteSources("code.wasm", "data.txt", req), 0, ticks)()
	if out.Len() != 0 {
		t.Fatalf("local files noted %q", out.String())
	}
}

// TestSubmitFetchTimeoutFlag: --fetch-timeout is refused outside its
// range by name, and reaches the node as fetch_timeout_s.
func TestSubmitFetchTimeoutFlag(t *testing.T) {
	f := newFakeNode(t)
	good := writeFile(t, "good.wasm", minimalModule("", ""))
	args := []string{"job", "submit", "--repo", f.repo, "--code", good, "--data", "ipfs://bafydata", "--block-size", "64", "--price", "1e15"}
	_, stderr, code := cli(t, append(args, "--fetch-timeout", "2h")...)
	wantExit(t, stderr, code, exitUsage, "--fetch-timeout: 2h0m0s outside 0..1h0m0s")
	var req apiv1.SubmitRequest
	if err := setFetchTimeout(&req, 1500*time.Millisecond); err != nil || req.FetchTimeoutS != 2 {
		t.Fatalf("1.5s: %d (%v)", req.FetchTimeoutS, err)
	}
	f.plan = apiv1.Plan{MicroJobs: 2}
	_, stderr, code = cli(t, append(args, "--fetch-timeout", "30s")...)
	wantExit(t, stderr, code, exitOK)
	if f.lastSubmit.FetchTimeoutS != 30 {
		t.Fatalf("submitted fetch_timeout_s %d", f.lastSubmit.FetchTimeoutS)
	}
}
