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
	"sync/atomic"
	"testing"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/node"
)

// fakeNode is a node's API with fixed jobs, enough for the client
// commands, and counts of the requests that would change something.
type fakeNode struct {
	repo    string
	jobs    []apiv1.Job
	output  []byte
	uploads atomic.Int32
	submits atomic.Int32
	cancels atomic.Int32
	plans   atomic.Int32
	// plan is the answer to POST /v1/jobs/plan.
	plan apiv1.Plan
	// describe, when set, answers the nth (from 0) GET
	// /v1/jobs/{id}/describe of job j; else the description is j alone.
	describe  func(n int, j apiv1.Job) apiv1.JobDescription
	describes atomic.Int32
	// lastSubmit is the body of the last POST /v1/jobs.
	lastSubmit apiv1.SubmitRequest
}

// newFakeNode serves jobs on a test server and writes a repo whose api file
// names it.
func newFakeNode(t *testing.T, jobs ...apiv1.Job) *fakeNode {
	t.Helper()
	f := &fakeNode{repo: t.TempDir(), jobs: jobs, output: []byte("the output\n")}
	find := func(w http.ResponseWriter, r *http.Request) (apiv1.Job, bool) {
		for _, j := range f.jobs {
			if j.ID == r.PathValue("id") {
				return j, true
			}
		}
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "no such job"})
		return apiv1.Job{}, false
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/id", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(apiv1.ID{PeerID: "node"})
	})
	mux.HandleFunc("GET /v1/jobs", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(f.jobs)
	})
	mux.HandleFunc("GET /v1/jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		if j, ok := find(w, r); ok {
			_ = json.NewEncoder(w).Encode(j)
		}
	})
	mux.HandleFunc("GET /v1/jobs/{id}/describe", func(w http.ResponseWriter, r *http.Request) {
		if j, ok := find(w, r); ok {
			n := int(f.describes.Add(1)) - 1
			d := apiv1.JobDescription{Job: j}
			if f.describe != nil {
				d = f.describe(n, j)
			}
			_ = json.NewEncoder(w).Encode(d)
		}
	})
	mux.HandleFunc("GET /v1/jobs/{id}/output", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := find(w, r); ok {
			_, _ = w.Write(f.output)
		}
	})
	mux.HandleFunc("POST /v1/jobs/{id}/cancel", func(w http.ResponseWriter, r *http.Request) {
		if j, ok := find(w, r); ok {
			f.cancels.Add(1)
			j.State = apiv1.JobCancelled
			_ = json.NewEncoder(w).Encode(j)
		}
	})
	mux.HandleFunc("POST /v1/content", func(w http.ResponseWriter, _ *http.Request) {
		f.uploads.Add(1)
		_ = json.NewEncoder(w).Encode(apiv1.Content{URI: "ipfs://bafy", SHA256: strings.Repeat("00", 32)})
	})
	mux.HandleFunc("POST /v1/jobs/plan", func(w http.ResponseWriter, _ *http.Request) {
		f.plans.Add(1)
		_ = json.NewEncoder(w).Encode(f.plan)
	})
	mux.HandleFunc("POST /v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&f.lastSubmit)
		f.submits.Add(1)
		_ = json.NewEncoder(w).Encode(apiv1.Job{ID: strings.Repeat("ff", 32), State: apiv1.JobOpen})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	for name, content := range map[string]string{node.ConfigFile: "", "api": srv.URL} {
		if err := os.WriteFile(filepath.Join(f.repo, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// cli runs jobnode in this process and returns its stdout, stderr and
// exit code.
func cli(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runMain(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

// wantExit checks a run's exit code and that stderr holds each of msgs.
func wantExit(t *testing.T, stderr string, code, want int, msgs ...string) {
	t.Helper()
	if code != want {
		t.Fatalf("exit code %d, want %d; stderr:\n%s", code, want, stderr)
	}
	for _, m := range msgs {
		if !strings.Contains(stderr, m) {
			t.Fatalf("stderr lacks %q:\n%s", m, stderr)
		}
	}
}

// minimalModule is the smallest WASI command: a _start that returns;
// withImport adds an import of module.name (a function of no arguments).
func minimalModule(module, name string) []byte {
	str := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	sec := func(id byte, body ...byte) []byte { return append([]byte{id, byte(len(body))}, body...) }
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, sec(1, 0x01, 0x60, 0x00, 0x00)...) // type 0: () -> ()
	fn := byte(0)
	if module != "" {
		imp := append(append([]byte{0x01}, str(module)...), str(name)...)
		m = append(m, sec(2, append(imp, 0x00, 0x00)...)...)
		fn = 1
	}
	m = append(m, sec(3, 0x01, 0x00)...)
	m = append(m, sec(7, append(append([]byte{0x01}, str("_start")...), 0x00, fn)...)...)
	m = append(m, sec(10, 0x01, 0x02, 0x00, 0x0b)...)
	return m
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSubmitRefusesBadInput: job submit refuses a module that cannot run
// and flags that are wrong, each by the flag's name with exit code 2, and
// then neither uploads nor submits anything; a good module and 1e15 go
// through.
func TestSubmitRefusesBadInput(t *testing.T) {
	f := newFakeNode(t)
	data := writeFile(t, "data.txt", []byte("the quick brown fox\n"))
	text := writeFile(t, "in.txt", []byte("not a module\n"))
	good := writeFile(t, "good.wasm", minimalModule("", ""))
	env := writeFile(t, "env.wasm", minimalModule("env", "abort"))
	submit := func(code, price string, extra ...string) []string {
		return append([]string{"job", "submit", "--repo", f.repo, "--code", code, "--data", data,
			"--block-size", "64", "--price", price}, extra...)
	}
	cases := []struct {
		name string
		args []string
		msgs []string
	}{
		{"text", submit(text, "1e15"), []string{"--code " + text + ": not a WebAssembly module (bad magic)"}},
		{"env import", submit(env, "1e15"), []string{"--code " + env + ": imports env.abort, which the sandbox does not provide"}},
		{"no code file", submit(filepath.Join(t.TempDir(), "gone.wasm"), "1e15"), []string{"--code: open", "no such file"}},
		{"1 wei", submit(good, "1"), []string{"--price: 1 wei is below the floor of 21000000000000 wei", "21000 gas at 1 gwei"}},
		{"fraction", submit(good, "1.5"), []string{`--price: "1.5": want a positive whole number of wei`}},
		{"no price", submit(good, ""), []string{"--price: missing"}},
		{"zero", submit(good, "0"), []string{"--price: 0 must be positive"}},
		{"no block size", []string{"job", "submit", "--repo", f.repo, "--code", good, "--data", data, "--price", "1e15"}, []string{"--block-size: missing"}},
		{"no data", []string{"job", "submit", "--repo", f.repo, "--code", good}, []string{"--data: missing"}},
		{"unknown flag", submit(good, "1e15", "--prize", "1"), []string{"unknown flag: --prize"}},
		{"split lines", submit(good, "1e15", "--split", "lines"), []string{`--split: "lines": want bytes or words`}},
		{"split a URI", []string{"job", "submit", "--repo", f.repo, "--code", good, "--data", "ipfs://bafy", "--block-size", "64",
			"--price", "1e15", "--split", "words"}, []string{"--split: words needs a local --data file"}},
		{"split a long word", submit(good, "1e15", "--split", "words", "--block-size", "4"), []string{"--split: words:", "word longer than a block"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := cli(t, tc.args...)
			wantExit(t, stderr, code, exitUsage, tc.msgs...)
			if !strings.HasPrefix(stderr, "jobnode: ") || strings.Contains(stderr, "price_wei") {
				t.Fatalf("stderr:\n%s", stderr)
			}
		})
	}
	if n, m := f.uploads.Load(), f.submits.Load(); n != 0 || m != 0 {
		t.Fatalf("refused submits made %d uploads and %d submits", n, m)
	}
	stdout, stderr, code := cli(t, submit(good, "1e15")...)
	wantExit(t, stderr, code, exitOK)
	if strings.TrimSpace(stdout) != strings.Repeat("ff", 32) || f.submits.Load() != 1 {
		t.Fatalf("good submit printed %q, %d submits", stdout, f.submits.Load())
	}
}

// TestWaitExitCodes: job wait's exit code tells how the job ended, and its
// message says so on stderr.
func TestWaitExitCodes(t *testing.T) {
	id := func(c byte) string { return strings.Repeat(string(c), 64) }
	jobs := []apiv1.Job{
		{ID: id('1'), State: apiv1.JobVerified, Verified: true, OutputCID: "bafy"},
		{ID: id('2'), State: apiv1.JobSettled, Verified: true, OutputCID: "bafy"},
		{ID: id('3'), State: apiv1.JobSettled, Verified: false, Culprits: []string{"peerX"}},
		{ID: id('4'), State: apiv1.JobCancelled},
		{ID: id('5'), State: apiv1.JobRefunded},
		{ID: id('6'), State: apiv1.JobRefunded, Undecided: []apiv1.UndecidedBlock{{Block: 2, Kind: apiv1.UndecidedDispute}}},
	}
	f := newFakeNode(t, jobs...)
	cases := []struct {
		id   string
		code int
		msg  string
	}{
		{id('1'), exitOK, ""},
		{id('2'), exitOK, ""},
		{id('3'), exitFailed, "job " + id('3') + " ended without every block verified"},
		{id('4'), exitCancelled, "job " + id('4') + " was cancelled"},
		{id('5'), exitTimedOut, "job " + id('5') + " timed out: its deadline passed and the escrow was refunded"},
		{id('6'), exitUndecided, "job " + id('6') + " was refunded at its deadline with undecided blocks"},
	}
	for _, tc := range cases {
		for _, json := range []bool{false, true} {
			args := []string{"job", "wait", "--repo", f.repo, tc.id[:8]}
			if json {
				args = append(args, "--json")
			}
			stdout, stderr, code := cli(t, args...)
			wantExit(t, stderr, code, tc.code, tc.msg)
			if tc.code == exitOK && stderr != "" {
				t.Fatalf("job wait %s said %q", tc.id, stderr)
			}
			if !json && !strings.Contains(stdout, "state ") {
				t.Fatalf("job wait %s printed %q", tc.id, stdout)
			}
		}
	}
	stdout, _, code := cli(t, "job", "wait", "--help")
	if code != exitOK || !strings.Contains(stdout, "4  cancelled by its creator") || !strings.Contains(stdout, "6  undecided") {
		t.Fatalf("job wait --help (exit %d):\n%s", code, stdout)
	}
}

// TestJobIDPrefixes: every command that takes a job ID takes a unique
// prefix of at least 4 hex digits; an ambiguous one lists the candidates,
// an unknown one says so, and nothing is cancelled by a prefix that does
// not resolve.
func TestJobIDPrefixes(t *testing.T) {
	a, b, c := "abcd"+strings.Repeat("1", 60), "abcd"+strings.Repeat("2", 60), "ef01"+strings.Repeat("3", 60)
	f := newFakeNode(t,
		apiv1.Job{ID: a, State: apiv1.JobVerified, Verified: true, OutputCID: "bafy"},
		apiv1.Job{ID: b, State: apiv1.JobOpen},
		apiv1.Job{ID: c, State: apiv1.JobOpen})
	for _, cmd := range []string{"status", "wait", "get", "cancel"} {
		_, stderr, code := cli(t, "job", cmd, "--repo", f.repo, "abcd")
		wantExit(t, stderr, code, exitUsage, "job ID prefix abcd is ambiguous: it matches 2 jobs", a, b)
		_, stderr, code = cli(t, "job", cmd, "--repo", f.repo, "beef")
		wantExit(t, stderr, code, exitError, "no such job: no job this node knows has an ID starting with beef")
		_, stderr, code = cli(t, "job", cmd, "--repo", f.repo, "ab")
		wantExit(t, stderr, code, exitUsage, `job ID "ab": give at least 4 hex digits`)
		_, stderr, code = cli(t, "job", cmd, "--repo", f.repo, "xyz1")
		wantExit(t, stderr, code, exitUsage, `job ID "xyz1": want hex digits`)
	}
	if n := f.cancels.Load(); n != 0 {
		t.Fatalf("%d cancels from prefixes that did not resolve", n)
	}
	stdout, stderr, code := cli(t, "job", "status", "--repo", f.repo, "ABCD1")
	wantExit(t, stderr, code, exitOK)
	if !strings.Contains(stdout, "job "+a) {
		t.Fatalf("job status ABCD1:\n%s", stdout)
	}
	stdout, stderr, code = cli(t, "job", "cancel", "--repo", f.repo, "ef01")
	wantExit(t, stderr, code, exitOK)
	if stdout != "job "+c+" cancelled\n" || f.cancels.Load() != 1 {
		t.Fatalf("job cancel ef01: %q", stdout)
	}
	_, stderr, code = cli(t, "job", "status", "--repo", f.repo, strings.Repeat("9", 64))
	wantExit(t, stderr, code, exitError, "HTTP 404: no such job")
}

// TestJobGetToStdout: job get -o - writes the output to stdout and
// creates nothing named "-".
func TestJobGetToStdout(t *testing.T) {
	id := "abcd" + strings.Repeat("1", 60)
	f := newFakeNode(t, apiv1.Job{ID: id, State: apiv1.JobVerified, Verified: true, OutputCID: "bafy"})
	dir := t.TempDir()
	t.Chdir(dir)
	stdout, stderr, code := cli(t, "job", "get", "--repo", f.repo, "abcd", "-o", "-")
	wantExit(t, stderr, code, exitOK)
	if stdout != string(f.output) {
		t.Fatalf("job get -o - printed %q, want %q", stdout, f.output)
	}
	if _, err := os.Stat(filepath.Join(dir, "-")); !os.IsNotExist(err) {
		t.Fatalf("job get -o - left a %q behind (%v)", "-", err)
	}
	out := filepath.Join(dir, "out")
	stdout, stderr, code = cli(t, "job", "get", "--repo", f.repo, id, "-o", out)
	wantExit(t, stderr, code, exitOK)
	if got, err := os.ReadFile(filepath.Join(out, "output.bin")); err != nil || !bytes.Equal(got, f.output) || !strings.Contains(stdout, "output.bin (11 bytes)") {
		t.Fatalf("job get -o DIR: %q (%v), printed %q", got, err, stdout)
	}
	_, stderr, code = cli(t, "job", "get", "--repo", f.repo, id, "-o", "-", "--merge", "sum")
	wantExit(t, stderr, code, exitUsage, `--merge: "sum": want wordcount`)
	_, stderr, code = cli(t, "job", "get", "--repo", f.repo, id, "-o", "-", "--merge", "wordcount")
	wantExit(t, stderr, code, exitError, "--merge wordcount: the output is not word counts")

	// --api reaches the node without the repo's api file.
	url, err := os.ReadFile(filepath.Join(f.repo, "api"))
	if err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	_, stderr, code = cli(t, "job", "get", "--repo", empty, id, "-o", "-")
	wantExit(t, stderr, code, exitError, "no repo")
	stdout, stderr, code = cli(t, "job", "get", "--repo", empty, "--api", string(url), id, "-o", "-")
	wantExit(t, stderr, code, exitOK)
	if stdout != string(f.output) {
		t.Fatalf("job get --api printed %q", stdout)
	}
}

// TestVersion: jobnode version and --version say the node's version, the
// Go version and the protocol versions.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		stdout, stderr, code := cli(t, args...)
		wantExit(t, stderr, code, exitOK)
		for _, want := range []string{"jobnode " + node.Version + "\n", "module ", "go go1.", "layout 2\n", "store /jobmesh/v2/mesh\n",
			"topics /jobmesh/2/...\n", "record settlement v1\n"} {
			if !strings.Contains(stdout, want) {
				t.Fatalf("jobnode %s lacks %q:\n%s", args[0], want, stdout)
			}
		}
	}
	stdout, _, _ := cli(t, "version", "--json")
	var v versionInfo
	if err := json.Unmarshal([]byte(stdout), &v); err != nil || v.Node != node.Version || v.Records["group"] == 0 {
		t.Fatalf("version --json: %+v (%v)", v, err)
	}
}

// TestAmountFlagsShareOneNotation: --amount takes what --price takes.
func TestAmountFlagsShareOneNotation(t *testing.T) {
	for _, s := range []string{"1e15", "1000000000000000", "1.0e15"} {
		if v, err := parseWei("amount", s); err != nil || v.String() != "1000000000000000" {
			t.Fatalf("parseWei(%q) = %v, %v", s, v, err)
		}
		if v, err := parsePrice(s); err != nil || v.String() != "1000000000000000" {
			t.Fatalf("parsePrice(%q) = %v, %v", s, v, err)
		}
	}
	_, stderr, code := cli(t, "wallet", "fund", "--repo", t.TempDir(), "--amount", "1.5")
	wantExit(t, stderr, code, exitUsage, `--amount: "1.5": want a positive whole number of wei`)
}
