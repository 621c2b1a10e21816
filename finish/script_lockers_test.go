package finish

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jobmesh/jobmesh/records"
)

// took writes p's took record of MacroJob m: by its author, or (by=q)
// under p's key by q, which the store refuses and a reader ignores.
func (s *script) took(p string, args map[string]string) string {
	m, err := strconv.ParseUint(args["m"], 10, 64)
	if err != nil {
		s.t.Fatal(err)
	}
	author := p
	if by := args["by"]; by != "" {
		author = by
	}
	s.put(pid(author), records.TookKey(s.plan.JobID, m, pid(p)), records.TookType, nil)
	return ""
}

// rounds prints the rounds every reader derives from the records, with
// each MacroJob's processors assigned as a QoS task.
func (s *script) rounds() string {
	_, recs := s.judge()
	var b strings.Builder
	for _, r := range FinalRounds(s.plan, recs) {
		o := TaskOutcome(s.plan.JobID, r)
		fmt.Fprintf(&b, "macro %d: commits=%s lockers=%s assigned=%s\n", r.Macro, names(r.Commits), names(r.Lockers), names(o.Assigned))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// forgeLockers adds to rounds the lockers that list names, as
// <macro>:<p>,..: what a colluding finalizer would write.
func (s *script) forgeLockers(rounds []records.RoundOrder, list string) []records.RoundOrder {
	if list == "" {
		return rounds
	}
	for _, f := range strings.Split(list, ",") {
		ms, p, _ := strings.Cut(f, ":")
		m, err := strconv.ParseUint(ms, 10, 64)
		if err != nil {
			s.t.Fatal(err)
		}
		i := slices.IndexFunc(rounds, func(r records.RoundOrder) bool { return r.Macro == m })
		if i < 0 {
			s.t.Fatalf("no rounds of MacroJob %d", m)
		}
		rounds[i].Lockers = append(rounds[i].Lockers, pid(p))
	}
	return rounds
}
