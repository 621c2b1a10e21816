package records_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/libp2p/go-libp2p/core/test"

	"github.com/jobmesh/jobmesh/records"
	"github.com/jobmesh/jobmesh/records/recordstest"
)

func FuzzDecodeGroup(f *testing.F) {
	info := recordstest.GroupJob(f, 3, "", 0)
	a := test.RandPeerIDFatal(f)
	members := []string{test.RandPeerIDFatal(f).String(), test.RandPeerIDFatal(f).String(), a.String()}
	slices.Sort(members)
	g := records.Group{Version: records.GroupVersion, Job: info.ID().String(), CardModel: "A100", Members: members, Chooser: a.String()}
	b, _ := json.Marshal(g)
	if _, err := records.DecodeGroup(info, records.GroupKey(info.ID(), a.String()), a.String(), b); err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`null`))
	key := records.GroupKey(info.ID(), a.String())
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := records.DecodeGroup(info, key, a.String(), data)
		if err != nil {
			return
		}
		// Whatever decodes names R sorted, distinct members and its author.
		if len(g.Members) != 3 || !slices.IsSorted(g.Members) || g.Chooser != a.String() || g.CardModel == "" {
			t.Fatalf("decoded an inconsistent group %+v", g)
		}
		for i := 1; i < len(g.Members); i++ {
			if g.Members[i] == g.Members[i-1] {
				t.Fatalf("duplicate member in %+v", g)
			}
		}
	})
}
