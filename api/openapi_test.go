package api_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
)

// documentedAhead are paths the document describes whose handlers are
// built elsewhere and not registered here yet.
var documentedAhead = map[string]bool{}

// literalRoutes finds every pattern the package's non-test sources
// register on a mux directly, with mux.Handle or mux.HandleFunc and a
// string pattern. There must be none: a route registered past
// Handler.handle would be missing from Handler.Routes, which this test and
// the attack tests enumerate.
func literalRoutes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Handle" && sel.Sel.Name != "HandleFunc") {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				out = append(out, fset.Position(lit.Pos()).String()+" "+lit.Value)
			}
			return true
		})
	}
	return out
}

// openAPIJSON is the committed document, read as YAML and written as JSON.
func openAPIJSON(t *testing.T) []byte {
	t.Helper()
	if strings.HasPrefix(strings.TrimSpace(string(api.OpenAPI)), "{") {
		t.Fatal("openapi.yaml is written in JSON syntax, not YAML's block style")
	}
	var doc any
	if err := yaml.Unmarshal(api.OpenAPI, &doc); err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatalf("openapi.yaml as JSON: %v", err)
	}
	return b
}

type openAPI struct {
	OpenAPI string                                `json:"openapi"`
	Paths   map[string]map[string]json.RawMessage `json:"paths"`
}

// TestOpenAPICoversEveryRoute: every route NewHandler registers is in the
// committed document, every operation of the document is registered, and
// the node serves the document.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	var doc openAPI
	if err := json.Unmarshal(openAPIJSON(t), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	var documented []string
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	if direct := literalRoutes(t); len(direct) > 0 {
		t.Fatalf("routes registered past Handler.handle: %v", direct)
	}
	m := meshtest.New(t, localmesh.Options{Processors: 1})
	h := nodeHandler(m.Bootstrap().Node)
	var registered []string
	for _, r := range h.Routes() {
		if r.Path == "/" {
			continue
		}
		// The document names a wildcard of the rest of the path {x}, the
		// router {x...}.
		path := strings.ReplaceAll(r.Path, "...}", "}")
		registered = append(registered, r.Method+" "+path)
		// The document says who may call each operation, as the router does.
		var op struct {
			Access string `json:"x-jobmesh-access"`
		}
		if raw, ok := doc.Paths[path][strings.ToLower(r.Method)]; ok {
			if err := json.Unmarshal(raw, &op); err != nil || op.Access != r.Access {
				t.Errorf("%s %s: openapi.yaml says access %q, the router %q (%v)", r.Method, r.Path, op.Access, r.Access, err)
			}
		}
	}
	if len(registered) < 10 {
		t.Fatalf("found only %d routes: %v", len(registered), registered)
	}
	for _, r := range registered {
		if !slices.Contains(documented, r) {
			t.Errorf("route %q is not in openapi.yaml", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(registered, d) && !documentedAhead[d] {
			t.Errorf("openapi.yaml documents %q, which is not registered", d)
		}
	}

	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/v1/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	onDisk, _ := os.ReadFile("openapi.yaml")
	if resp.StatusCode != http.StatusOK || string(b) != string(onDisk) {
		t.Fatalf("GET /v1/openapi.yaml: %d, %d bytes", resp.StatusCode, len(b))
	}
}

// jsonFields lists the JSON names of struct type t's fields.
func jsonFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// TestOpenAPIJobSchemas: the document's job summary and its parts, and
// the dispatch view and its processors, have the fields of the types the
// API encodes, and its job states are every state the API derives.
func TestOpenAPIJobSchemas(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Enum       []string                   `json:"enum"`
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPIJSON(t), &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc.Components.Schemas
	for name, typ := range map[string]reflect.Type{
		"Job": reflect.TypeFor[apiv1.Job](), "UndecidedBlock": reflect.TypeFor[apiv1.UndecidedBlock](),
		"JobFailure":    reflect.TypeFor[apiv1.JobFailure](),
		"DispatchNodes": reflect.TypeFor[apiv1.DispatchNodes](), "DispatchNode": reflect.TypeFor[apiv1.DispatchNode](),
		"Plan": reflect.TypeFor[apiv1.Plan](), "JobDescription": reflect.TypeFor[apiv1.JobDescription](),
		"MacroJobInfo": reflect.TypeFor[apiv1.MacroJobInfo](), "MicroJobInfo": reflect.TypeFor[apiv1.MicroJobInfo](), "JobEvent": reflect.TypeFor[apiv1.JobEvent](),
	} {
		documented := slices.Sorted(maps.Keys(schemas[name].Properties))
		if want := jsonFields(typ); !slices.Equal(documented, want) {
			t.Errorf("schema %s has properties %v, the type %v", name, documented, want)
		}
	}
	states := []apiv1.JobState{apiv1.JobUnfunded, apiv1.JobOpen, apiv1.JobRunning, apiv1.JobUndecided,
		apiv1.JobVerified, apiv1.JobSettled, apiv1.JobCancelled, apiv1.JobRefunded, apiv1.JobFailed}
	var want []string
	for _, s := range states {
		want = append(want, string(s))
	}
	if got := schemas["JobState"].Enum; !slices.Equal(got, want) {
		t.Errorf("JobState enum %v, want %v", got, want)
	}
}
