package finish_test

import (
	"crypto/sha256"
	"slices"
	"testing"

	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

func failMicro(s string) jobs.ID { return jobs.ID(sha256.Sum256([]byte(s))) }

func report(peer, micro, kind string, code uint32) records.Reported {
	id := failMicro("job")
	return records.Reported{Peer: peer, Report: records.NewFailureReport(id, failMicro(micro), records.Failure{Kind: kind, ExitCode: code, Stderr: peer + " says"})}
}

func TestJobFailed(t *testing.T) {
	trap := records.Failure{Kind: records.FailTrap}
	exit1 := records.Failure{Kind: records.FailExit, ExitCode: 1}
	for _, c := range []struct {
		name    string
		reports []records.Reported
		f       int
		own     map[jobs.ID]records.Failure // nil: a reader (FailureAgreed)
		want    string                      // failed MicroJob; "" none
		by      []string
	}{
		{name: "two agree, reader", f: 2, want: "m1", by: []string{"a", "b"},
			reports: []records.Reported{report("a", "m1", "trap", 0), report("b", "m1", "trap", 0)}},
		{name: "one report is below F", f: 2,
			reports: []records.Reported{report("a", "m1", "trap", 0)}},
		{name: "F=1 on a one-processor mesh", f: 1, want: "m1", by: []string{"a"},
			reports: []records.Reported{report("a", "m1", "trap", 0)}, own: map[jobs.ID]records.Failure{failMicro("m1"): trap}},
		{name: "the same peer twice counts once", f: 2,
			reports: []records.Reported{report("a", "m1", "trap", 0), report("a", "m1", "trap", 0)}},
		{name: "different MicroJobs do not add up", f: 2,
			reports: []records.Reported{report("a", "m1", "trap", 0), report("b", "m2", "trap", 0)}},
		{name: "different kinds do not add up", f: 2,
			reports: []records.Reported{report("a", "m1", "trap", 0), report("b", "m1", "timeout", 0)}},
		{name: "different exit codes do not add up", f: 2,
			reports: []records.Reported{report("a", "m1", "exit", 1), report("b", "m1", "exit", 2)}},
		{name: "signer whose run failed alike", f: 2, want: "m1", by: []string{"a", "b", "c"},
			reports: []records.Reported{report("c", "m1", "exit", 1), report("a", "m1", "exit", 1), report("b", "m1", "exit", 1)},
			own:     map[jobs.ID]records.Failure{failMicro("m1"): exit1}},
		// The colluding pair: two fake reports agree, the signer's own
		// run of the MicroJob succeeded (no entry in own).
		{name: "colluding pair, honest run succeeded", f: 2,
			reports: []records.Reported{report("x", "m1", "trap", 0), report("y", "m1", "trap", 0)},
			own:     map[jobs.ID]records.Failure{}},
		{name: "colluding pair, honest run failed another way", f: 2,
			reports: []records.Reported{report("x", "m1", "trap", 0), report("y", "m1", "trap", 0)},
			own:     map[jobs.ID]records.Failure{failMicro("m1"): exit1}},
		{name: "own failure of another MicroJob does not count", f: 2,
			reports: []records.Reported{report("x", "m1", "trap", 0), report("y", "m1", "trap", 0)},
			own:     map[jobs.ID]records.Failure{failMicro("m2"): trap}},
		{name: "F=0 never fails", f: 0,
			reports: []records.Reported{report("a", "m1", "trap", 0)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var fj finish.FailedJob
			var ok bool
			if c.own == nil {
				fj, ok = finish.FailureAgreed(c.reports, c.f)
			} else {
				fj, ok = finish.JobFailed(c.reports, c.f, c.own)
			}
			if ok != (c.want != "") {
				t.Fatalf("failed = %v (%+v), want %v", ok, fj, c.want != "")
			}
			if !ok {
				return
			}
			if fj.Micro != failMicro(c.want) || !slices.Equal(fj.Reporters, c.by) || fj.Stderr != c.by[0]+" says" {
				t.Fatalf("got %+v, want micro %s by %v", fj, c.want, c.by)
			}
		})
	}
}

// Reports that name different MicroJobs first converge: each processor
// runs the MicroJobs others report (FailureChecks) and reports its
// lowest failed one (OwnReport), so the failure comes to stand.
func TestFailureReportsConverge(t *testing.T) {
	micros := []jobs.ID{failMicro("m1"), failMicro("m2"), failMicro("m3")}
	type proc struct {
		name string
		ran  map[jobs.ID]bool
		own  map[jobs.ID]records.Failure
	}
	procs := []*proc{{name: "a"}, {name: "b"}}
	for i, p := range procs {
		p.ran, p.own = map[jobs.ID]bool{micros[i+1]: true}, map[jobs.ID]records.Failure{micros[i+1]: {Kind: records.FailTrap}}
	}
	reports := func() []records.Reported {
		var out []records.Reported
		for _, p := range procs {
			m, f, ok := finish.OwnReport(p.own)
			if ok {
				out = append(out, records.Reported{Peer: p.name, Report: records.NewFailureReport(failMicro("job"), m, f)})
			}
		}
		return out
	}
	for round := 0; round < 4; round++ {
		for _, p := range procs {
			for _, m := range finish.FailureChecks(reports(), p.ran) {
				p.ran[m], p.own[m] = true, records.Failure{Kind: records.FailTrap}
			}
		}
	}
	for _, p := range procs {
		fj, ok := finish.JobFailed(reports(), 2, p.own)
		if !ok || !slices.Equal(fj.Reporters, []string{"a", "b"}) {
			t.Fatalf("%s: failed = %v, %+v", p.name, ok, fj)
		}
	}
}
