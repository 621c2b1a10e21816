package processor

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
	"github.com/jobmesh/jobmesh/meshview"
	"github.com/jobmesh/jobmesh/records"
)

func TestGroupReplicaItems(t *testing.T) {
	info, plan := byteJob(t, 6, 2, jobs.Requirements{Replicas: 3})
	js := &jobState{info: info, plan: plan}
	m := &plan.Macros[0]
	items := roomItems(js, m)
	if len(items) != 3*len(m.Micros) {
		t.Fatalf("%d items for %d MicroJobs and R=3", len(items), len(m.Micros))
	}
	count := map[jobs.ID]int{}
	for i, it := range items {
		mid, r, err := parseReplicaItem(it)
		if err != nil {
			t.Fatal(err)
		}
		// Replica-major: every MicroJob's #0 comes before any #1.
		if r != i/len(m.Micros) || mid != m.Micros[i%len(m.Micros)].ID {
			t.Fatalf("item %d is %q", i, it)
		}
		if replicaItem(mid, r) != it {
			t.Fatalf("item %q does not round-trip", it)
		}
		count[mid]++
	}
	for _, mu := range m.Micros {
		if count[mu.ID] != 3 {
			t.Fatalf("MicroJob %s has %d items", mu.ID, count[mu.ID])
		}
	}
	if len(slices.Compact(slices.Clone(items))) != len(items) {
		t.Fatal("duplicate items")
	}
	for _, bad := range []macrojob.ID{"", "#1", macrojob.ID(m.Micros[0].ID.String()), macrojob.ID(m.Micros[0].ID.String() + "#"),
		macrojob.ID(m.Micros[0].ID.String() + "#-1"), macrojob.ID(m.Micros[0].ID.String() + "#01"), macrojob.ID(m.Micros[0].ID.String() + "#16"), "zz#0"} {
		if _, _, err := parseReplicaItem(bad); !errors.Is(err, records.ErrBadRecord) {
			t.Errorf("item %q: err %v", bad, err)
		}
	}
	// R = 1 rooms keep the plain MicroJob IDs.
	info1 := *info
	info1.Requirements.Replicas = 1
	plan1, err := jobs.Slice(&info1)
	if err != nil {
		t.Fatal(err)
	}
	one := roomItems(&jobState{info: &info1, plan: plan1}, &plan1.Macros[0])
	for i, it := range one {
		if string(it) != plan1.Macros[0].Micros[i].ID.String() {
			t.Fatalf("R=1 item %d is %q", i, it)
		}
	}
}

// TestGroupWaitingLogsOnce: a replicated job without a group is logged
// once a minute with what it needs, not on every poll.
func TestGroupWaitingLogsOnce(t *testing.T) {
	var buf bytes.Buffer
	w := &Worker{log: slog.New(slog.NewTextHandler(&buf, nil))}
	w.groups.events = newGroupMetrics(prometheus.NewRegistry())
	info, plan := byteJob(t, 2, 1, jobs.Requirements{Replicas: 4, GPUModel: "big"})
	js := &jobState{info: info, plan: plan}
	_, cerr := meshview.ChooseGroup(info, []meshview.GroupCandidate{{ID: "a", CardModel: "big", Weight: 1}}, meshview.GroupSeed(info), "a")
	if !errors.Is(cerr, meshview.ErrNoGroup) {
		t.Fatalf("one candidate for R=4: %v", cerr)
	}
	for range 5 {
		w.logWaiting(js, cerr)
	}
	out := buf.String()
	if n := strings.Count(out, "replicated job waits"); n != 1 {
		t.Fatalf("logged %d times:\n%s", n, out)
	}
	if n := testutil.ToFloat64(w.groups.events.WithLabelValues("waiting")); n != 1 {
		t.Fatalf("waiting counted %v times, want 1", n)
	}
	for _, want := range []string{"replicas=4", "gpuModel=big", plan.JobID.String(), "no card model has enough processors"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log lacks %q:\n%s", want, out)
		}
	}
}
