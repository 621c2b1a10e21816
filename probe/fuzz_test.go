package probe_test

import (
	"encoding/json"

	"testing"

	"github.com/jobmesh/jobmesh/probe"
)

func FuzzDecodeChallenge(f *testing.F) {
	f.Add([]byte(`{"window":3,"members":["a","b"]}`))
	f.Add([]byte(`{"window":3,"members":["a","a"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := probe.DecodeChallenge(b)
		if err == nil && c.Validate(c.Members[0]) != nil {
			t.Fatalf("decoded an invalid challenge %+v", c)
		}
	})
}

func FuzzDecodeAnswer(f *testing.F) {
	f.Add([]byte(`{"hash":"` + "00000000000000000000000000000000000000000000000000000000000000ff" + `"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := probe.DecodeAnswer(b)
		if err == nil && h != ([32]byte{}) {
			if _, err := probe.DecodeAnswer(mustJSON(t, probe.NewAnswer(h))); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzParseKey(f *testing.F) {
	f.Add("/probes/3/a")
	f.Add("/probes/3/a/commit/b")
	f.Fuzz(func(t *testing.T, key string) {
		k, err := probe.ParseKey(key)
		if err != nil {
			return
		}
		var back string
		switch k.Kind {
		case probe.KindChallenge:
			back = probe.ChallengeKey(k.Window, k.Challenger)
		case probe.KindCommit:
			back = probe.CommitKey(k.Window, k.Challenger, k.Member)
		case probe.KindResult:
			back = probe.ResultKey(k.Window, k.Challenger, k.Member)
		}
		if back != key {
			t.Fatalf("%q parsed as %+v, which writes %q", key, k, back)
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
