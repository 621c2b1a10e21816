package records_test

import (
	"crypto/sha256"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/probe"
	"github.com/jobmesh/jobmesh/records"
)

// TestKeyLevel: mesh-level keys name no job; job-level keys name theirs;
// keys outside the layout are refused.
func TestKeyLevel(t *testing.T) {
	id := jobs.ID(sha256.Sum256([]byte("job")))
	micro := jobs.ID(sha256.Sum256([]byte("micro")))
	ps := newPeer(t).String()
	for key, want := range map[string]records.Level{
		records.AdvertKey(ps):        records.MeshLevel,
		records.WalletBindingKey(ps): records.MeshLevel,
		records.JobKey(id):           records.MeshLevel,
		records.CancelKey(id):        records.MeshLevel,
		records.AbortedKey(id):       records.MeshLevel,
		records.GroupKey(id, ps):     records.MeshLevel,
		records.SettledKey(id):       records.MeshLevel,
		records.FailureKey(id, ps):   records.MeshLevel,

		records.RoomLockKey(id.String(), 2): records.JobLevel,
		records.TookKey(id, 2, ps):          records.JobLevel,
		records.Key{Type: records.CommitType, Job: id, Macro: 3, Micro: micro, Peer: ps}.String(): records.JobLevel,
		records.Key{Type: records.ResultType, Job: id, Macro: 3, Micro: micro, Peer: ps}.String(): records.JobLevel,
		records.Key{Type: records.RevealType, Job: id, Peer: ps}.String():                         records.JobLevel,
		records.DisputeKey(id, 1, ps):     records.JobLevel,
		records.RerunKey(id, 1, ps):       records.JobLevel,
		records.CheckKey(id, 1, ps):       records.JobLevel,
		records.RedoKey(id, micro, ps):    records.JobLevel,
		records.VerdictKey(id, ps):        records.JobLevel,
		records.HolderKey(id, newPeer(t)): records.JobLevel,
		records.SettlementKey(id):         records.JobLevel,
		records.SignatureKey(id, ps):      records.JobLevel,
	} {
		l, job, err := records.KeyLevel(key)
		if err != nil || l != want {
			t.Errorf("KeyLevel(%q) = %v, %v; want %v", key, l, err, want)
			continue
		}
		if wantJob := map[records.Level]jobs.ID{records.JobLevel: id}[l]; job != wantJob {
			t.Errorf("KeyLevel(%q) names job %s, want %s", key, job, wantJob)
		}
	}
	for _, bad := range []string{"", "/jobs", records.JobKey(id) + "/unknown", "/nodes/x", "/other"} {
		if _, _, err := records.KeyLevel(bad); !errors.Is(err, records.ErrKey) {
			t.Errorf("KeyLevel(%q) = %v, want ErrKey", bad, err)
		}
	}
}

// TestLevelOfEveryType: every record type the package declares (each
// exported constant ending in "Type" in types.go) has a level, so a new
// type cannot be added without deciding where it lives.
func TestLevelOfEveryType(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "types.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasSuffix(name.Name, "Type") || !name.IsExported() {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s is not a string literal", name.Name)
				}
				typ, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				n++
				if _, ok := records.LevelOf(typ); !ok {
					t.Errorf("record type %s (%q) has no level", name.Name, typ)
				}
			}
		}
	}
	if n < 20 {
		t.Fatalf("found %d record types in types.go, want the whole layout", n)
	}
	if _, ok := records.LevelOf("no-such-type"); ok {
		t.Error("LevelOf knows a type outside the layout")
	}
}

func TestProbeKeysAreMeshLevel(t *testing.T) {
	key := probe.Prefix + "/anything/below"
	if l, _, err := records.KeyLevel(key); err != nil || l != records.MeshLevel {
		t.Fatalf("%s: level %v, %v", key, l, err)
	}
	if _, _, err := records.KeyLevel("/elsewhere/x"); err == nil {
		t.Fatal("a key outside the layout has a level")
	}
}
