package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/examples"
	"github.com/jobmesh/jobmesh/examples/wordcount/counts"
	"github.com/jobmesh/jobmesh/meshclient"
)

// TestJobCommands submits, lists, cancels and follows jobs through real
// daemons with the job commands: a client submits to a mesh that has no
// processor yet (its job stays open and is cancelled), then a processor
// joins and a second job runs to its verdict under job submit --wait.
func TestJobCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process mesh in -short mode")
	}
	root := t.TempDir()
	boot, client, proc := filepath.Join(root, "boot"), filepath.Join(root, "client"), filepath.Join(root, "proc")
	for _, r := range []string{boot, client, proc} {
		initRepo(t, r)
	}
	code, err := examples.Build(context.Background(), "wordcount")
	if err != nil {
		t.Fatal(err)
	}
	codeFile, dataFile := filepath.Join(root, "wc.wasm"), filepath.Join(root, "text.txt")
	if err := os.WriteFile(codeFile, code, 0o600); err != nil {
		t.Fatal(err)
	}
	// Raw 128-byte blocks would cut words of this text apart.
	text := []byte(strings.Repeat("the quick brown fox jumps over the lazy dog\n", 10) + "Über straße, naïve café: 42 apples; 7 pears.\n")
	if err := os.WriteFile(dataFile, text, 0o600); err != nil {
		t.Fatal(err)
	}
	startDaemon(t, "bootstrap", boot)
	var id apiv1.ID
	if err := json.Unmarshal([]byte(run(t, "id", "--repo", boot, "--json")), &id); err != nil {
		t.Fatal(err)
	}
	startDaemon(t, "client", client, "--bootstrap", id.Addrs[0])

	submit := []string{"job", "submit", "--repo", client, "--code", codeFile, "--data", dataFile,
		"--block-size", "128", "--price", "1e15", "--microjobs", "2", "--blocks-per-micro", "1"}
	var open apiv1.Job
	if err := json.Unmarshal([]byte(run(t, append(submit, "--json")...)), &open); err != nil {
		t.Fatal(err)
	}
	if open.State != apiv1.JobOpen || !open.Mine || !strings.HasPrefix(open.CodeURI, "ipfs://") {
		t.Fatalf("submitted %+v", open)
	}
	if out := run(t, "job", "cancel", "--repo", client, open.ID); !strings.Contains(out, "cancelled") {
		t.Fatalf("job cancel: %q", out)
	}
	var st apiv1.Job
	if err := json.Unmarshal([]byte(run(t, "job", "status", "--repo", client, open.ID, "--json")), &st); err != nil || st.State != apiv1.JobCancelled {
		t.Fatalf("status after cancel: %+v (%v)", st, err)
	}
	out, err := jobnode("job", "status", "--repo", client, strings.Repeat("ab", 32)).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "HTTP 404") || !strings.Contains(string(out), "no such job") {
		t.Fatalf("status of an unknown job: %v %s", err, out)
	}

	startDaemon(t, "process", proc, "--bootstrap", id.Addrs[0])
	out2 := run(t, append(submit, "--wait", "--split", "words")...)
	lines := strings.Split(strings.TrimSpace(out2), "\n")
	jobID := lines[0]
	if len(jobID) != 64 || !strings.Contains(out2, "MicroJobs committed") || !strings.Contains(out2, "state verified") || !strings.Contains(out2, "output ") {
		t.Fatalf("job submit --wait:\n%s", out2)
	}
	list := run(t, "job", "list", "--repo", client)
	if !strings.Contains(list, jobID) || !strings.Contains(list, open.ID) || !strings.Contains(list, "cancelled") {
		t.Fatalf("job list:\n%s", list)
	}
	if out := run(t, "job", "wait", "--repo", client, jobID); !strings.Contains(out, "state verified") {
		t.Fatalf("job wait: %s", out)
	}
	out, err = jobnode("job", "cancel", "--repo", client, jobID).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "HTTP 409") {
		t.Fatalf("cancel after the verdict: %v %s", err, out)
	}
	// The output, fetched and written: the word counts of every block.
	outDir := filepath.Join(root, "out")
	run(t, "job", "get", "--repo", client, jobID, "-o", outDir)
	got, err := os.ReadFile(filepath.Join(outDir, "output.bin"))
	if err != nil || len(got) == 0 {
		t.Fatalf("job get wrote %d bytes (%v)", len(got), err)
	}
	// Blocks cut between words and the block counts merged: the file's
	// word count, as Go counts it here.
	want := counts.Encode(counts.Count(text))
	if merged := run(t, "job", "get", "--repo", client, jobID, "--merge", "wordcount", "-o", "-"); merged != string(want) {
		t.Fatalf("job get --merge wordcount:\n%s\nwant:\n%s", merged, want)
	}
	if bytes.Equal(got, want) {
		t.Fatal("the unmerged output is already the total: the job had one block, so merging went untested")
	}
}

// TestFollowUndecided: job wait keeps following an undecided job, says
// once which block is undecided and why, and ends where the job ends
// (here refunded at its deadline, exit code exitUndecided); job status's
// lines name the block.
func TestFollowUndecided(t *testing.T) {
	u := apiv1.UndecidedBlock{Block: 3, Kind: apiv1.UndecidedDispute, Sides: []string{"peerA", "peerB"},
		Votes:  map[string]int{strings.Repeat("ab", 32): 2, strings.Repeat("cd", 32): 1},
		Reason: "no re-runner left to draw: lead of 1 with 2 of 3 votes"}
	id := strings.Repeat("01", 32)
	states := []apiv1.Job{
		{ID: id, State: apiv1.JobRunning, MicroJobs: 6, Committed: 6, Disclosed: 5},
		{ID: id, State: apiv1.JobUndecided, MicroJobs: 6, Committed: 6, Disclosed: 6, Undecided: []apiv1.UndecidedBlock{u}},
		{ID: id, State: apiv1.JobUndecided, MicroJobs: 6, Committed: 6, Disclosed: 6, Undecided: []apiv1.UndecidedBlock{u}, Holders: []string{"peerA"}},
		{ID: id, State: apiv1.JobRefunded, MicroJobs: 6, Committed: 6, Disclosed: 6, Undecided: []apiv1.UndecidedBlock{u}},
	}
	var mu sync.Mutex
	reads := 0
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/id", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(apiv1.ID{PeerID: "node"})
	})
	mux.HandleFunc("GET /v1/jobs/{id}", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		j := states[min(reads, len(states)-1)]
		reads++
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(j)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := meshclient.New(srv.URL)
	c.Poll = time.Millisecond

	var out, errOut bytes.Buffer
	// A job refunded at its deadline with blocks undecided ends with the
	// undecided exit code.
	if err := follow(context.Background(), c, id, &out, &errOut, false); exitCode(err) != exitUndecided {
		t.Fatalf("follow ended with %v (exit code %d), want %d", err, exitCode(err), exitUndecided)
	}
	line := "undecided block 3 (dispute) sides peerA peerB votes abababababab=2 cdcdcdcdcdcd=1: " + u.Reason
	if got := out.String(); strings.Count(got, "is undecided") != 1 || strings.Count(got, line) != 2 || !strings.Contains(got, "state refunded") {
		t.Fatalf("job wait printed:\n%s", got)
	}
	out.Reset()
	if err := follow(context.Background(), c, id, &out, &errOut, true); exitCode(err) != exitUndecided {
		t.Fatalf("follow --json ended with %v, want exit code %d", err, exitUndecided)
	}
	var end apiv1.Job
	if err := json.Unmarshal(out.Bytes(), &end); err != nil || end.State != apiv1.JobRefunded {
		t.Fatalf("job wait --json printed %q (%v)", out.String(), err)
	}
	printEnd(&out, states[1])
	if !strings.Contains(out.String(), "state undecided\n"+line+"\n") {
		t.Fatalf("job status printed:\n%s", out.String())
	}
}
