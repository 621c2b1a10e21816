package api_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"
)

// promQLWords are the PromQL functions, aggregations and keywords the
// monitoring files may use, and the labels Prometheus adds to every
// scraped series (instance, job) and its own series (up).
var promQLWords = map[string]bool{
	"sum": true, "max": true, "min": true, "avg": true, "count": true, "rate": true, "increase": true,
	"irate": true, "histogram_quantile": true, "label_values": true, "by": true, "without": true,
	"or": true, "and": true, "unless": true, "on": true, "ignoring": true, "group_left": true,
	"group_right": true, "up": true, "instance": true, "job": true,
}

var (
	// quoted strings, range and subquery selectors, numbers
	promQLStrip = regexp.MustCompile(`"[^"]*"|\[[^\]]*\]|\b[0-9][0-9.]*(e[0-9]+)?\b`)
	// a metric and the labels it is selected by
	promQLSelector = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}`)
	promQLMatcher  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)`)
	promQLGrouping = regexp.MustCompile(`\b(by|without|on|ignoring)\s*\([^)]*\)`)
	promQLWord     = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	descName       = regexp.MustCompile(`fqName: "([^"]+)"`)
	descLabels     = regexp.MustCompile(`variableLabels: \{([^}]*)\}`)
)

// promQLMetrics returns the metrics expr selects, each with the labels
// it matches on. It knows what jobmesh's monitoring files use of PromQL.
func promQLMetrics(expr string) map[string][]string {
	out := map[string][]string{}
	for _, m := range promQLSelector.FindAllStringSubmatch(expr, -1) {
		for _, l := range promQLMatcher.FindAllStringSubmatch(m[2], -1) {
			out[m[1]] = append(out[m[1]], l[1])
		}
	}
	rest := promQLSelector.ReplaceAllString(expr, "$1")
	rest = promQLGrouping.ReplaceAllString(promQLStrip.ReplaceAllString(rest, ""), "")
	for _, w := range promQLWord.FindAllString(rest, -1) {
		if !promQLWords[w] {
			if _, ok := out[w]; !ok {
				out[w] = nil
			}
		}
	}
	return out
}

func TestPromQLMetrics(t *testing.T) {
	got := promQLMetrics(`sum by (instance, le) (rate(foo_seconds_bucket{instance=~"$x", outcome="ok"}[5m])) / 1e18 > 0.5 * bar_total * 4e9 or up{job="jobmesh"} == 0`)
	want := map[string][]string{"foo_seconds_bucket": {"instance", "outcome"}, "bar_total": nil, "up": {"job"}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if !slices.Equal(got[k], v) {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// monitoringQueries are the PromQL expressions of the Grafana dashboard
// (its panels' targets and its template variables) and of the alert rules.
func monitoringQueries(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../deploy/grafana/jobmesh.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Type       string `json:"type"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("deploy/grafana/jobmesh.json: %v", err)
	}
	var out []string
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		if v.Type == "query" {
			out = append(out, v.Definition)
		}
	}
	b, err = os.ReadFile("../deploy/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatalf("deploy/prometheus/alerts.yml: %v", err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" {
				t.Fatalf("alerts.yml: a rule without alert or expr: %+v", r)
			}
			out = append(out, r.Expr)
		}
	}
	return out
}

// registeredMetrics lists the series names reg exports (a histogram's
// _bucket, _sum and _count included) with their variable labels,
// whether or not any has a value yet.
func registeredMetrics(reg *prometheus.Registry) map[string][]string {
	ch := make(chan *prometheus.Desc)
	go func() { reg.Describe(ch); close(ch) }()
	out := map[string][]string{}
	for d := range ch {
		s := d.String()
		name := descName.FindStringSubmatch(s)
		if name == nil {
			continue
		}
		var labels []string
		if l := descLabels.FindStringSubmatch(s); l != nil && l[1] != "" {
			labels = strings.Split(l[1], ",")
		}
		for _, suffix := range []string{"", "_bucket", "_sum", "_count"} {
			out[name[1]+suffix] = append(labels, "le")
		}
	}
	return out
}

// TestMonitoringQueriesExist: every metric the Grafana dashboard and the
// alert rules query, with every label they select it by, is one a
// processor node with a chain exports on /metrics.
func TestMonitoringQueriesExist(t *testing.T) {
	proc := chainProcessor(t)
	nodeHandler(proc.Node) // the API registers its metrics with the node's registry
	registered := registeredMetrics(proc.Node.Metrics)
	queried := map[string]bool{}
	for _, expr := range monitoringQueries(t) {
		for name, labels := range promQLMetrics(expr) {
			queried[name] = true
			if name == "up" {
				continue // Prometheus's own series of each scrape
			}
			have, ok := registered[name]
			if !ok {
				t.Errorf("%q queries %s, which the node does not export", expr, name)
				continue
			}
			for _, l := range labels {
				if l != "instance" && l != "job" && !slices.Contains(have, l) {
					t.Errorf("%q selects %s by label %s; it has %v", expr, name, l, have)
				}
			}
		}
	}
	if len(queried) < 30 {
		t.Fatalf("the monitoring files query only %d metrics: %v", len(queried), queried)
	}
}
