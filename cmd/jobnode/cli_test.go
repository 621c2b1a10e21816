package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/meshclient"
	"github.com/jobmesh/jobmesh/node"
)

// The test binary doubles as jobnode: with JOBNODE_EXEC=1 it runs main, so
// the multi-process tests start real, separate jobnode processes without a
// separate build.
func TestMain(m *testing.M) {
	if os.Getenv("JOBNODE_EXEC") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func jobnode(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "JOBNODE_EXEC=1")
	return cmd
}

func run(t testing.TB, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := jobnode(args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("jobnode %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// daemon is a jobnode daemon running in its own process.
type daemon struct {
	repo string
	cmd  *exec.Cmd
	logs *bytes.Buffer
	done chan error
}

func startDaemon(t testing.TB, role, repo string, args ...string) *daemon {
	t.Helper()
	logs := &bytes.Buffer{}
	cmd := jobnode(append([]string{role, "--repo", repo, "--log-level", "warn"}, args...)...)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemon{repo: repo, cmd: cmd, logs: logs, done: make(chan error, 1)}
	go func() { d.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-d.done
		if t.Failed() {
			t.Logf("%s %s output:\n%s", role, repo, logs.String())
		}
	})
	wait.Until(t, 30*time.Second, func() error {
		_, err := node.ReadAPIAddr(repo)
		return err
	})
	return d
}

// stop sends SIGTERM and checks for a clean exit.
func (d *daemon) stop(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-d.done:
		d.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("daemon %s exited with %v", d.repo, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("daemon %s did not stop on SIGTERM", d.repo)
	}
	if _, err := node.ReadAPIAddr(d.repo); !errors.Is(err, node.ErrNotRunning) {
		t.Fatalf("api file left behind: %v", err)
	}
}

func initRepo(t testing.TB, dir string, args ...string) {
	t.Helper()
	out := run(t, append([]string{"init", "--repo", dir,
		"--listen", "/ip4/127.0.0.1/tcp/0", "--listen", "/ip4/127.0.0.1/udp/0/quic-v1"}, args...)...)
	if !strings.Contains(out, "peer id 12D3KooW") {
		t.Fatalf("init printed %q", out)
	}
}

func TestInitRefusesExistingRepo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	initRepo(t, dir)
	cfg, err := os.ReadFile(filepath.Join(dir, node.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	cmd := jobnode("init", "--repo", dir)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "already initialised") {
		t.Fatalf("second init: err=%v output=%s", err, out)
	}
	after, _ := os.ReadFile(filepath.Join(dir, node.ConfigFile))
	if !bytes.Equal(cfg, after) {
		t.Fatal("second init changed the config")
	}
	if _, err := node.LoadConfig(filepath.Join(dir, node.ConfigFile)); err != nil {
		t.Fatalf("written config does not load: %v", err)
	}
}

func TestClientCommandsWithoutDaemon(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	initRepo(t, dir)
	out, err := jobnode("peers", "--repo", dir).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no daemon running") {
		t.Fatalf("peers without daemon: err=%v output=%s", err, out)
	}
	out, err = jobnode("id", "--repo", filepath.Join(t.TempDir(), "nothing")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no repo") {
		t.Fatalf("id without repo: err=%v output=%s", err, out)
	}
}

func TestThreeProcessMesh(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process mesh in -short mode")
	}
	root := t.TempDir()
	boot, p1, p2 := filepath.Join(root, "boot"), filepath.Join(root, "p1"), filepath.Join(root, "p2")
	initRepo(t, boot)
	initRepo(t, p1, "--card-model", "rtx4090", "--vram-mib", "24576")
	initRepo(t, p2, "--card-model", "cpu")

	db := startDaemon(t, "bootstrap", boot)
	var id apiv1.ID
	if err := json.Unmarshal([]byte(run(t, "id", "--repo", boot, "--json")), &id); err != nil {
		t.Fatal(err)
	}
	plain := strings.Fields(run(t, "id", "--repo", boot))
	if plain[0] != id.PeerID || !slices.Equal(plain[1:], id.Addrs) || len(id.Addrs) == 0 {
		t.Fatalf("id: plain %v, json %+v", plain, id)
	}
	d1 := startDaemon(t, "process", p1, "--bootstrap", id.Addrs[0])
	d2 := startDaemon(t, "process", p2, "--bootstrap", id.Addrs[0])

	ids := map[string]string{}
	for _, r := range []string{boot, p1, p2} {
		ids[r] = strings.Fields(run(t, "id", "--repo", r))[0]
	}
	ctx := context.Background()
	wait.Until(t, 60*time.Second, func() error {
		for _, r := range []string{boot, p1, p2} {
			c, err := meshclient.ForRepo(r)
			if err != nil {
				return err
			}
			peers, err := c.Peers(ctx)
			if err != nil {
				return err
			}
			for other, oid := range ids {
				if other != r && !slices.ContainsFunc(peers, func(p apiv1.Peer) bool { return p.PeerID == oid }) {
					return fmt.Errorf("%s does not list %s among its peers", r, other)
				}
			}
			ads, err := c.Nodes(ctx)
			if err != nil {
				return err
			}
			if len(ads) != 2 {
				return fmt.Errorf("%s knows %d processors", r, len(ads))
			}
		}
		return nil
	})
	out := run(t, "nodes", "--repo", boot)
	if !strings.Contains(out, ids[p1]) || !strings.Contains(out, "rtx4090") || !strings.Contains(out, "24576") {
		t.Fatalf("nodes table:\n%s", out)
	}
	if peers := run(t, "peers", "--repo", p2); !strings.Contains(peers, ids[boot]) {
		t.Fatalf("peers of p2:\n%s", peers)
	}
	d2.stop(t)
	d1.stop(t)
	db.stop(t)
}

func TestBootstrapServesDevChain(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process dev chain in -short mode")
	}
	root := t.TempDir()
	boot := filepath.Join(root, "boot")
	initRepo(t, boot)
	logs := &bytes.Buffer{}
	cmd := jobnode("bootstrap", "--repo", boot, "--log-level", "warn", "--devchain", "127.0.0.1:0")
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemon{repo: boot, cmd: cmd, logs: logs, done: make(chan error, 1)}
	go func() { d.done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-d.done })
	wait.Until(t, 60*time.Second, func() error {
		_, err := node.ReadAPIAddr(boot)
		return err
	})
	out := logs.String()
	var url, contract string
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "devchain "); ok {
			url = v
		}
		if v, ok := strings.CutPrefix(l, "escrow "); ok {
			contract = v
		}
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasPrefix(contract, "0x") {
		t.Fatalf("daemon output:\n%s", out)
	}
	// The chain answers JSON-RPC and has the escrow contract deployed.
	body := `{"jsonrpc":"2.0","id":1,"method":"eth_getCode","params":["` + contract + `","latest"]}`
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Result string `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || len(r.Result) < 100 {
		t.Fatalf("eth_getCode: %v %q", err, r.Result)
	}
	d.stop(t)
}

// TestDemoThatGivesUpSaysWhy: a demo whose job is not verified in time
// exits with an error and shows the mesh's latest warnings, which its
// quiet log leaves out.
func TestDemoThatGivesUpSaysWhy(t *testing.T) {
	if testing.Short() {
		t.Skip("demo in -short mode")
	}
	var out, errb bytes.Buffer
	cmd := jobnode("demo", "--processors", "2", "--width", "64", "--height", "64", "--tile", "32", "--out", t.TempDir(), "--timeout", "1ms")
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err == nil || !strings.Contains(errb.String(), "waiting for the verdict") || !strings.Contains(out.String(), "the mesh's latest warnings:") {
		t.Fatalf("demo with a 1 ms timeout: %v\n%s%s", err, out.String(), errb.String())
	}
}

func TestDemoRunsAJobEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("demo in -short mode")
	}
	out := t.TempDir()
	// Quiet by default (no --log-level); --serve keeps the mesh up after
	// the summary.
	demo := startLogged(t, "demo", "--json", "--serve", "--processors", "3",
		"--width", "128", "--height", "96", "--tile", "32", "--out", out, "--timeout", "3m")
	var s demoSummary
	wait.Until(t, 4*time.Minute, func() error {
		select {
		case <-demo.done:
			t.Fatalf("demo exited: %v\n%s", demo.err, demo.stderr(t))
		default:
		}
		return json.Unmarshal(demo.stdout(t), &s)
	})
	checkServedDemo(t, s)
	if err := demo.stop(t); err != nil {
		t.Fatalf("demo --serve on SIGTERM: %v", err)
	}
	if progress := demo.stderr(t); bytes.Contains(progress, []byte("level=")) || !bytes.Contains(progress, []byte("MicroJobs done")) {
		t.Fatalf("the demo's stderr is not its progress alone:\n%s", progress)
	}
	for _, m := range s.Members {
		if _, err := os.Stat(filepath.Join(m.Repo, node.APIFile)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("api file of %s left behind: %v", m.Repo, err)
		}
	}
	if !s.Verified || len(s.JobID) != 64 || s.OutputCID == "" || len(s.Verifier) == 0 {
		t.Fatalf("summary: %+v", s)
	}
	if len(s.Culprits) != 0 || len(s.Processors) == 0 {
		t.Fatalf("an honest mesh: %+v", s)
	}
	// Settled on the embedded chain: payouts plus refund equal the escrow.
	if !strings.HasPrefix(s.SettlementTx, "0x") || len(s.Payouts) == 0 {
		t.Fatalf("not settled: %+v", s)
	}
	total, ok := new(big.Int).SetString(s.Refund, 10)
	if !ok {
		t.Fatalf("refund %q", s.Refund)
	}
	for _, a := range s.Payouts {
		v, ok := new(big.Int).SetString(a, 10)
		if !ok {
			t.Fatalf("payout %q", a)
		}
		total.Add(total, v)
	}
	if total.Cmp(big.NewInt(1_000_000_000_000_000)) != 0 {
		t.Fatalf("payouts + refund = %s, escrow was 10^15", total)
	}
	for _, f := range []string{s.Picture, s.TileMap} {
		b, err := os.ReadFile(f)
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Fatalf("%s is not a PNG (%v)", f, err)
		}
	}
}

// checkServedDemo checks what demo --serve --json lists: every member with
// its API, dashboard link and TCP and QUIC addresses; its repo reaches its
// API (the api file), and so does --api.
func checkServedDemo(t *testing.T, s demoSummary) {
	t.Helper()
	if len(s.Members) != 5 {
		t.Fatalf("members: %+v", s.Members)
	}
	for _, m := range s.Members {
		swarm := strings.Join(m.Swarm, " ")
		if !strings.HasPrefix(m.API, "http://127.0.0.1:") || !strings.Contains(m.Dashboard, "127.0.0.1") ||
			!strings.Contains(swarm, "/tcp/") || !strings.Contains(swarm, "/quic-v1/") {
			t.Fatalf("member %+v", m)
		}
	}
	client := s.Members[len(s.Members)-1]
	if png := run(t, "job", "get", "--repo", client.Repo, s.JobID[:8], "-o", "-"); !strings.HasPrefix(png, "\x89PNG") {
		t.Fatalf("job get --repo %s printed %.40q", client.Repo, png)
	}
	var j apiv1.Job
	status := run(t, "job", "status", "--repo", t.TempDir(), "--api", client.API, s.JobID, "--json")
	if err := json.Unmarshal([]byte(status), &j); err != nil || j.ID != s.JobID || !j.Verified {
		t.Fatalf("job status --api %s: %v\n%s", client.API, err, status)
	}
}

// TestDaemonAPIToken: a repo made before API tokens gets one when its
// daemon starts (private to its owner); the daemon prints a one-time
// dashboard link and 'jobnode dashboard' makes another; the CLI's commands
// send the token, and a request without it changes nothing.
func TestDaemonAPIToken(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process daemon in -short mode")
	}
	repo := filepath.Join(t.TempDir(), "boot")
	initRepo(t, repo)
	tokenFile := filepath.Join(repo, node.APITokenFile)
	if err := os.Remove(tokenFile); err != nil {
		t.Fatalf("init wrote no token: %v", err)
	}
	d := startDaemon(t, "bootstrap", repo)
	fi, err := os.Stat(tokenFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file after start: %v (%v)", fi, err)
	}
	addr, err := node.ReadAPIAddr(repo)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + addr
	wait.Until(t, 30*time.Second, func() error {
		if !strings.Contains(d.logs.String(), "dashboard "+base+"/ui/#login=") {
			return errors.New("no dashboard link printed yet")
		}
		return nil
	})
	link := strings.TrimSpace(run(t, "dashboard", "--repo", repo))
	if !strings.HasPrefix(link, base+"/ui/#login=") || strings.Contains(d.logs.String(), link) {
		t.Fatalf("jobnode dashboard printed %q", link)
	}
	resp, err := http.Post(base+"/v1/login", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("POST /v1/login without the token: %d", resp.StatusCode)
	}
	if out := run(t, "id", "--repo", repo); !strings.HasPrefix(out, "12D3KooW") {
		t.Fatalf("jobnode id: %q", out)
	}
	d.stop(t)
}
