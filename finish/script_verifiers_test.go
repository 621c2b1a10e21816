package finish

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/jobs"
)

// takeover is the scripts' ProcessingTimeout: the wait before the next in
// rank runs a verifier MicroJob.
const takeover = time.Minute

// verifiers ranks the processors procs for each MacroJob's verifier
// MicroJob, owners naming each MacroJob's first owner ("-" for none), and
// keeps the ranks for due.
func (s *script) verifiers(args map[string]string) string {
	procs := pids(args["procs"])
	owners := make([]string, len(s.plan.Macros))
	for i, o := range strings.Split(args["owners"], ",") {
		if i < len(owners) && o != "-" && o != "" {
			owners[i] = pid(o)
		}
	}
	recs := FromRecords(s.plan.JobID, s.recs)
	ran := func(id jobs.ID, p string) bool {
		for _, c := range recs.Commits {
			if c.MicroID == id && c.Processor == p {
				return true
			}
		}
		return false
	}
	s.ranks = VerifierRunners(s.plan.JobID.String(), s.plan, procs, owners, ran)
	var b strings.Builder
	for i, r := range s.ranks {
		m := &s.plan.Macros[i]
		var checks []string
		for _, src := range (*m.Verifier()).Sources {
			checks = append(checks, strconv.Itoa(src.Slot))
		}
		fmt.Fprintf(&b, "m%d: checks micro=%s ranks=%s\n", i, strings.Join(checks, ","), names(r))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// due lists the MacroJobs whose verifier MicroJob is self's to run since
// the ranks were derived (since=<d>, at most max=<n>): a verifier with a
// commitment is done, and self ran the MicroJobs it committed.
func (s *script) due(self string, args map[string]string) string {
	since, err := time.ParseDuration(args["since"])
	if err != nil {
		s.t.Fatal(err)
	}
	limit := len(s.plan.Macros)
	if m, ok := args["max"]; ok {
		limit, _ = strconv.Atoi(m)
	}
	recs := FromRecords(s.plan.JobID, s.recs)
	done := func(id jobs.ID) bool {
		for _, c := range recs.Commits {
			if c.MicroID == id {
				return true
			}
		}
		return false
	}
	var out []string
	for _, id := range DueVerifiers(s.plan, s.ranks, pid(self), done, since, takeover, limit) {
		for i, m := range s.plan.Macros {
			if (*m.Verifier()).ID == id {
				out = append(out, "m"+strconv.Itoa(i))
			}
		}
	}
	if len(out) == 0 {
		return "due: none"
	}
	return "due: " + strings.Join(out, ",")
}
