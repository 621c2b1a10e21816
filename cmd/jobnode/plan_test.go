package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jobmesh/jobmesh/apiv1"
)

// TestSubmitPlan: job submit prints the plan before it submits; a plan of
// more MicroJobs than --max-microjobs is refused by that flag's name with
// exit code 2, and --dry-run prints the plan and submits nothing, for
// local data (planned here) and data by URI (planned by the node).
func TestSubmitPlan(t *testing.T) {
	f := newFakeNode(t)
	data := writeFile(t, "data.txt", bytes.Repeat([]byte("x"), 19<<10))
	good := writeFile(t, "good.wasm", minimalModule("", ""))
	submit := func(data, blockSize string, extra ...string) []string {
		return append([]string{"job", "submit", "--repo", f.repo, "--code", good, "--data", data,
			"--block-size", blockSize, "--price", "1e15"}, extra...)
	}
	// 19 KiB in 3-byte blocks: 6486 blocks, 649 regular MicroJobs, 65 MacroJobs.
	_, stderr, code := cli(t, submit(data, "3")...)
	wantExit(t, stderr, code, exitUsage, "--max-microjobs: the plan has 714 MicroJobs (6486 blocks of 3 bytes), over the limit of 256",
		"pass --max-microjobs 714")

	stdout, stderr, code := cli(t, submit(data, "3", "--max-microjobs", "1000", "--dry-run")...)
	wantExit(t, stderr, code, exitOK)
	for _, want := range []string{"plan: 19456 bytes in 6486 blocks of 3 bytes; 65 MacroJobs; 714 MicroJobs (649 regular, 65 verifiers), each run by 1 processor: 714 runs",
		"price: 1000000000000000 wei in escrow, about 1400560224089 wei per MicroJob run",
		"warning: a run earns less than the 21000000000000 wei"} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("dry run printed\n%s\nwithout %q", stdout, want)
		}
	}
	stdout, stderr, code = cli(t, submit(data, "4096", "--replicas", "2", "--dry-run", "--json")...)
	wantExit(t, stderr, code, exitOK)
	var p apiv1.Plan
	if err := json.Unmarshal([]byte(stdout), &p); err != nil {
		t.Fatalf("dry run --json: %v\n%s", err, stdout)
	}
	if want := (apiv1.Plan{DataSize: 19 << 10, BlockSize: 4096, Blocks: 5, MacroJobs: 1, RegularMicroJobs: 1, VerifierMicroJobs: 1,
		MicroJobs: 2, Replicas: 2, Runs: 4, PriceWei: "1000000000000000", PerRunWei: "250000000000000"}); p != want {
		t.Fatalf("plan %+v, want %+v", p, want)
	}
	if n, m := f.uploads.Load(), f.submits.Load(); n != 0 || m != 0 {
		t.Fatalf("refused and dry-run submits made %d uploads and %d submits", n, m)
	}

	// Data by URI: the node plans it.
	f.plan = apiv1.Plan{DataSize: 19 << 10, BlockSize: 3, Blocks: 6486, MacroJobs: 65, RegularMicroJobs: 649, VerifierMicroJobs: 65,
		MicroJobs: 714, Replicas: 1, Runs: 714, PriceWei: "1000000000000000", PerRunWei: "1400560224089"}
	_, stderr, code = cli(t, submit("https://example.org/data", "3")...)
	wantExit(t, stderr, code, exitUsage, "--max-microjobs: the plan has 714 MicroJobs")
	stdout, stderr, code = cli(t, submit("https://example.org/data", "3", "--max-microjobs", "0", "--dry-run")...)
	wantExit(t, stderr, code, exitOK)
	if !strings.Contains(stdout, "714 MicroJobs (649 regular, 65 verifiers)") || f.plans.Load() != 2 || f.submits.Load() != 0 {
		t.Fatalf("dry run by URI printed %q; %d plans, %d submits", stdout, f.plans.Load(), f.submits.Load())
	}

	// A submit prints the plan on stderr and the job ID alone on stdout.
	stdout, stderr, code = cli(t, submit(data, "4096")...)
	wantExit(t, stderr, code, exitOK, "plan: 19456 bytes in 5 blocks of 4096 bytes; 1 MacroJobs; 2 MicroJobs (1 regular, 1 verifiers)")
	if strings.TrimSpace(stdout) != strings.Repeat("ff", 32) || f.submits.Load() != 1 {
		t.Fatalf("submit printed %q, %d submits", stdout, f.submits.Load())
	}
}

// TestSubmitBlockLimits: --block-timeout, --block-memory and --block-output
// reach the node as the job's limits and show in the plan; out of range,
// each is refused by its name with exit code 2.
func TestSubmitBlockLimits(t *testing.T) {
	f := newFakeNode(t)
	data := writeFile(t, "data.txt", []byte("the quick brown fox\n"))
	good := writeFile(t, "good.wasm", minimalModule("", ""))
	args := []string{"job", "submit", "--repo", f.repo, "--code", good, "--data", data, "--block-size", "64", "--price", "1e15"}
	for flags, msg := range map[string]string{
		"--block-timeout 2h":     "--block-timeout: 2h0m0s: want whole seconds up to 1h0m0s",
		"--block-timeout 1500ms": "--block-timeout: 1.5s: want whole seconds",
		"--block-memory 5000":    "--block-memory: 5000 MiB is over 4096 MiB",
		"--block-output 4097":    "--block-output: 4097 MiB is over 4096 MiB",
	} {
		_, stderr, code := cli(t, append(args, strings.Fields(flags)...)...)
		wantExit(t, stderr, code, exitUsage, msg)
	}
	_, stderr, code := cli(t, append(args, "--block-timeout", "5s", "--block-memory", "64")...)
	wantExit(t, stderr, code, exitOK, "per-block limits: time 5s, memory 64 MiB, output the processor's")
	if got := f.lastSubmit.Limits; got != (apiv1.Limits{BlockTimeoutS: 5, MemoryMiB: 64}) {
		t.Fatalf("submitted limits %+v", got)
	}
}
