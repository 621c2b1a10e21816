package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/node"
)

func loadRepoConfig(t *testing.T, repo string) node.Config {
	t.Helper()
	cfg, err := node.LoadConfig(filepath.Join(repo, node.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestInitWritesChainSettings: init writes --eth-rpc, --escrow and
// --chain-id into [chain], and refuses an escrow without a chain or one
// that is not an address.
func TestInitWritesChainSettings(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "r")
	const rpc, esc = "http://127.0.0.1:8545", "0x00000000000000000000000000000000000000e5"
	_, stderr, code := cli(t, "init", "--repo", repo, "--eth-rpc", rpc, "--escrow", esc, "--chain-id", "1337")
	wantExit(t, stderr, code, exitOK)
	if c := loadRepoConfig(t, repo).Chain; c.RPC != rpc || c.Contract != esc || c.ChainID != 1337 {
		t.Fatalf("[chain] after init: %+v", c)
	}
	_, stderr, code = cli(t, "init", "--repo", filepath.Join(root, "a"), "--escrow", esc)
	wantExit(t, stderr, code, exitUsage, "--escrow needs --eth-rpc")
	_, stderr, code = cli(t, "init", "--repo", filepath.Join(root, "b"), "--eth-rpc", rpc, "--escrow", "0x12")
	wantExit(t, stderr, code, exitError, "[chain] contract")
	if _, err := os.Stat(filepath.Join(root, "b", node.ConfigFile)); err == nil {
		t.Fatal("a refused init wrote a config")
	}
}

// TestEscrowDeploy deploys an escrow with its own parameters to a dev
// chain given once, at init: the address is printed and written into the
// config, and the stake commands then read that contract without flags.
func TestEscrowDeploy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a dev chain")
	}
	chain := startTestDevChain(t, time.Hour)
	url := chain.URL()
	repo := filepath.Join(t.TempDir(), "op")
	initRepo(t, repo, "--eth-rpc", url)

	if out := fails(t, "escrow", "deploy", "--repo", repo, "--quorum", "1/2"); !strings.Contains(out, "--quorum") || !strings.Contains(out, "2/3") {
		t.Fatalf("a quorum below 2/3: %s", out)
	}
	if out := fails(t, "escrow", "deploy", "--repo", repo, "--min-stake", "0"); !strings.Contains(out, "--min-stake") {
		t.Fatalf("a zero min stake: %s", out)
	}
	if out := fails(t, "escrow", "deploy", "--repo", repo); !strings.Contains(out, "insufficient funds") {
		t.Fatalf("deploying from an empty wallet: %s", out)
	}
	run(t, "wallet", "fund", "--repo", repo, "--amount", "1e18")
	out := run(t, "escrow", "deploy", "--repo", repo, "--min-stake", "2e18", "--quorum", "3/4", "--unstake-cooldown", "1h")
	m := regexp.MustCompile(`(?m)^escrow (0x[0-9a-fA-F]{40})$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("deploy printed no address:\n%s", out)
	}
	if strings.EqualFold(m[1], chain.Escrow().Hex()) {
		t.Fatalf("deploy printed the dev chain's own escrow %s", m[1])
	}
	if c := loadRepoConfig(t, repo).Chain; c.Contract != m[1] || c.RPC != url {
		t.Fatalf("[chain] after deploy: %+v, want contract %s rpc %s", c, m[1], url)
	}
	var st stakeStatus
	if err := json.Unmarshal([]byte(run(t, "stake", "status", "--repo", repo, "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.MinStake != "2000000000000000000" {
		t.Fatalf("the deployed contract's min stake is %s, want 2e18", st.MinStake)
	}
}

// TestLogFormat: --log-format and [log] pick slog's JSON or text
// handler; bad values are usage errors.
func TestLogFormat(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "r")
	initRepo(t, repo)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--log-format", "yaml"}, exitUsage, "--log-format"},
		{[]string{"--log-level", "loud"}, exitUsage, "--log-level"},
	} {
		_, stderr, code := cli(t, append([]string{"wallet", "address", "--repo", repo}, tc.args...)...)
		wantExit(t, stderr, code, tc.code, tc.msg)
	}
	cfgPath := filepath.Join(repo, node.ConfigFile)
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte("format = 'text'"), []byte("format = 'json'"), 1)
	if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	g := &globals{repo: repo, stderr: &buf}
	g.logger().Info("hello", "k", 1)
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil || rec["msg"] != "hello" || rec["level"] != "INFO" {
		t.Fatalf("[log] format json wrote %q (%v)", buf.String(), err)
	}
	buf.Reset()
	g.logFormat, g.logLevel = "text", "warn"
	g.logger().Info("hidden")
	g.logger().Warn("shown")
	if s := buf.String(); !strings.HasPrefix(s, "time=") || !strings.Contains(s, "msg=shown") || strings.Contains(s, "hidden") {
		t.Fatalf("--log-format text --log-level warn wrote %q", s)
	}
	// The demo is quiet unless --log-level says otherwise.
	buf.Reset()
	g.logLevel, g.logFormat = "", ""
	g.demoLogger().Warn("node chatter")
	if buf.Len() != 0 {
		t.Fatalf("the demo's default logger wrote %q", buf.String())
	}
	if !(&globals{logLevel: "info"}).demoLogger().Enabled(t.Context(), slog.LevelInfo) {
		t.Fatal("the demo's logger with --log-level info hides INFO")
	}
}

// TestProcessAloneWarns: a processor with no bootstrap peer says so, as a
// WARN record of its JSON log (--log-format json) and as a plain stderr
// line.
func TestProcessAloneWarns(t *testing.T) {
	if testing.Short() {
		t.Skip("daemon process in -short mode")
	}
	repo := filepath.Join(t.TempDir(), "p")
	initRepo(t, repo)
	p := startLogged(t, "process", "--repo", repo, "--log-format", "json")
	wait.Until(t, 30*time.Second, func() error {
		b := p.stderr(t)
		plain, logged := false, false
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "jobnode: warning: no bootstrap peer: this node runs alone") {
				plain = true
			}
			var rec struct{ Level, Msg string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Level == "WARN" && strings.Contains(rec.Msg, "runs alone") {
				logged = true
			}
		}
		if !plain || !logged {
			return fmt.Errorf("no alone warning yet; stdout:\n%s\nstderr:\n%s", p.stdout(t), b)
		}
		return nil
	})
}

// logged is a jobnode process whose stdout and stderr go to files, read
// while it runs.
type logged struct {
	cmd  *exec.Cmd
	dir  string
	done chan struct{}
	err  error // the exit, once done is closed
}

// startLogged starts jobnode with args; the test's cleanup kills it.
func startLogged(t *testing.T, args ...string) *logged {
	t.Helper()
	p := &logged{cmd: jobnode(args...), dir: t.TempDir(), done: make(chan struct{})}
	for name, w := range map[string]*io.Writer{"stdout": &p.cmd.Stdout, "stderr": &p.cmd.Stderr} {
		f, err := os.Create(filepath.Join(p.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		*w = f
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// stop sends SIGTERM and returns the exit.
func (p *logged) stop(t *testing.T) error {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
		return p.err
	case <-time.After(30 * time.Second):
		t.Fatal("jobnode did not stop on SIGTERM")
		return nil
	}
}

// stdout and stderr are what the process wrote so far.
func (p *logged) stdout(t *testing.T) []byte { return p.read(t, "stdout") }
func (p *logged) stderr(t *testing.T) []byte { return p.read(t, "stderr") }

func (p *logged) read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
