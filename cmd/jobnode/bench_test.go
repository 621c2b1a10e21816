package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/meshclient"
	"github.com/jobmesh/jobmesh/node"
)

// idlePeriod is how long the processor idles before its memory is read:
// longer than the store's default rebroadcast (15s), so at least one
// rebroadcast round and several gossipsub heartbeats are included.
const idlePeriod = 20 * time.Second

// BenchmarkIdleProcessorMemory starts a bootstrap daemon and a processor
// daemon as separate processes (the test binary runs as jobnode, see
// TestMain), waits until the processor's advertisement is visible on the
// bootstrap node, lets it idle for idlePeriod, and reads the processor's
// resident set (VmRSS, split into anonymous and file-backed pages) and
// peak (VmHWM) from /proc, beside the Go runtime's
// own view from the daemon's /metrics. Linux only (it reads /proc). Run
// with -benchtime=1x.
func BenchmarkIdleProcessorMemory(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc")
	}
	root := b.TempDir()
	boot, proc := filepath.Join(root, "boot"), filepath.Join(root, "proc")
	initRepo(b, boot)
	initRepo(b, proc)
	startDaemon(b, "bootstrap", boot)
	var id apiv1.ID
	if err := json.Unmarshal([]byte(run(b, "id", "--repo", boot, "--json")), &id); err != nil {
		b.Fatal(err)
	}
	d := startDaemon(b, "process", proc, "--bootstrap", id.Addrs[0])
	procID := strings.Fields(run(b, "id", "--repo", proc))[0]

	ctx := context.Background()
	wait.Until(b, 60*time.Second, func() error {
		c, err := meshclient.ForRepo(boot)
		if err != nil {
			return err
		}
		ads, err := c.Nodes(ctx)
		if err != nil {
			return err
		}
		if len(ads) != 1 || ads[0].PeerID != procID {
			return fmt.Errorf("bootstrap knows %d processors, want the one started", len(ads))
		}
		return nil
	})

	var status map[string]float64
	var gauges map[string]float64
	for b.Loop() {
		// A fixed period: this measures a settled process, it does not
		// wait for any event.
		time.Sleep(idlePeriod)
		var err error
		if status, err = procStatus(d.cmd.Process.Pid); err != nil {
			b.Fatal(err)
		}
		if gauges, err = daemonGauges(ctx, proc); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(status["VmRSS"]/1024, "rss-MB")
	b.ReportMetric(status["VmHWM"]/1024, "peak-rss-MB")
	// Anonymous memory is what the process allocated; file-backed pages
	// are mostly the executable's code, shared and reclaimable.
	b.ReportMetric(status["RssAnon"]/1024, "anon-MB")
	b.ReportMetric(status["RssFile"]/1024, "file-MB")
	b.ReportMetric(gauges["go_memstats_heap_inuse_bytes"]/(1<<20), "heap-inuse-MB")
	b.ReportMetric(gauges["go_memstats_sys_bytes"]/(1<<20), "go-sys-MB")
	b.ReportMetric(gauges["go_goroutines"], "goroutines")
}

// procStatus returns the kB-valued fields of /proc/<pid>/status.
func procStatus(pid int) (map[string]float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(rest)
		if !ok || len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err == nil {
			out[name] = v
		}
	}
	if _, ok := out["VmRSS"]; !ok {
		return nil, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
	}
	return out, sc.Err()
}

// daemonGauges reads the unlabelled samples of the daemon's /metrics.
func daemonGauges(ctx context.Context, repo string) (map[string]float64, error) {
	addr, err := node.ReadAPIAddr(repo)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for line := range strings.Lines(string(body)) {
		fields := strings.Fields(line)
		if len(fields) != 2 || strings.HasPrefix(fields[0], "#") || strings.Contains(fields[0], "{") {
			continue
		}
		if v, err := strconv.ParseFloat(fields[1], 64); err == nil {
			out[fields[0]] = v
		}
	}
	return out, nil
}
