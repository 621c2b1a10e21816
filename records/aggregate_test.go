package records_test

import (
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/records"
)

// An aggregate carries only its own job's and MacroJob's records of the
// kinds it is for, and only its writer may write it.
func TestAggregatesCarryTheirMacroJobsRecordsOnly(t *testing.T) {
	id, other := jobs.ID(sha256.Sum256([]byte("job"))), jobs.ID(sha256.Sum256([]byte("other")))
	micro := jobs.ID(sha256.Sum256([]byte("micro")))
	p, q := newPeer(t), newPeer(t)
	ps := p.String()
	committed, disclosed := records.CommittedKey(id, 4, ps), records.DisclosedKey(id, 4, ps)
	commit := records.Key{Type: records.CommitType, Job: id, Macro: 4, Micro: micro, Peer: ps}.String()
	result := records.Key{Type: records.ResultType, Job: id, Macro: 4, Micro: micro, Peer: ps}.String()
	took := records.TookKey(id, 4, ps)
	for _, c := range []struct {
		carrier, inner string
		ok             bool
	}{
		{committed, took, true},
		{committed, commit, true},
		{committed, result, false},
		{disclosed, commit, true},
		{disclosed, result, true},
		{disclosed, took, true},
		{committed, records.TookKey(id, 5, ps), false},
		{committed, records.TookKey(other, 4, ps), false},
		{disclosed, records.Key{Type: records.ResultType, Job: id, Macro: 3, Micro: micro, Peer: ps}.String(), false},
		{committed, records.VerdictKey(id, ps), false},
		{committed, records.CommittedKey(id, 4, q.String()), false},
		{records.TookKey(id, 4, ps), took, false},
		{committed, "/jobs/x", false},
		{"/jobs/x", took, false},
	} {
		err := records.CarriedBy(c.carrier, c.inner)
		if c.ok != (err == nil) || err != nil && !errors.Is(err, records.ErrKey) {
			t.Errorf("CarriedBy(%s, %s) = %v, want ok %v", c.carrier, c.inner, err, c.ok)
		}
	}
	policy := records.AuthorPolicy()
	for _, key := range []string{committed, disclosed} {
		if err := policy(key, p); err != nil {
			t.Errorf("%s by its writer: %v", key, err)
		}
		if err := policy(key, q); err == nil {
			t.Errorf("%s written by another peer was allowed", key)
		}
		if l, job, err := records.KeyLevel(key); err != nil || l != records.JobLevel || job != id {
			t.Errorf("KeyLevel(%s) = %v, %s, %v", key, l, job, err)
		}
	}
	if c := records.Carriage(); len(c.Types) != 2 || c.Policy(committed, took) != nil {
		t.Errorf("Carriage() = %+v", c)
	}
}
