package records_test

import (
	"testing"

	"github.com/jobmesh/jobmesh/probe"
	"github.com/jobmesh/jobmesh/records"
)

// TestAuthorPolicyProbes: a challenge only by its challenger, an answer
// only by its member; a malformed probe key by nobody.
func TestAuthorPolicyProbes(t *testing.T) {
	policy := records.AuthorPolicy()
	p, q := newPeer(t), newPeer(t)
	ps, qs := p.String(), q.String()
	for _, tc := range []struct {
		name string
		key  string
		ok   bool
	}{
		{"own challenge", probe.ChallengeKey(7, ps), true},
		{"forged challenge", probe.ChallengeKey(7, qs), false},
		{"own commit", probe.CommitKey(7, qs, ps), true},
		{"own result", probe.ResultKey(7, qs, ps), true},
		{"forged commit", probe.CommitKey(7, ps, qs), false},
		{"forged result", probe.ResultKey(7, ps, qs), false},
		{"malformed", probe.ChallengeKey(7, ps) + "/other/" + ps, false},
		{"bad window", "/probes/x/" + ps, false},
	} {
		if err := policy(tc.key, p); (err == nil) != tc.ok {
			t.Errorf("%s: %s by the first peer: err %v, want ok %v", tc.name, tc.key, err, tc.ok)
		}
	}
}
