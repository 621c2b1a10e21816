// Package scripttest runs datadriven test scripts: a command line, a line
// "----", then the expected output up to a blank line; a line starting
// with # is a comment. With update, the expected outputs are rewritten
// from what the commands print, comments and commands kept.
package scripttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Case is one command of a script and its expected and actual output.
type Case struct{ Cmd, Want, Got string }

// RunAll runs every script glob names as a subtest: newRun gives each
// script a fresh command runner.
func RunAll(t *testing.T, glob string, update bool, newRun func(t *testing.T) func(cmd string) string) {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { Run(t, f, update, newRun(t)) })
	}
}

// Run runs the script at path through run and compares each output with
// the expected one, or rewrites the script when update is set.
func Run(t *testing.T, path string, update bool, run func(cmd string) string) {
	t.Helper()
	cases, raw := Parse(t, path)
	for _, c := range cases {
		c.Got = run(c.Cmd)
		if !update && c.Got != c.Want {
			t.Errorf("%s: %s\n got:\n%s\nwant:\n%s", path, c.Cmd, c.Got, c.Want)
		}
	}
	if update {
		if err := os.WriteFile(path, []byte(Rewrite(raw, cases)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Parse reads the script at path.
func Parse(t *testing.T, path string) (cases []*Case, raw string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		i++
		if i >= len(lines) || lines[i] != "----" {
			t.Fatalf("%s:%d: command %q without ----", path, i, l)
		}
		var want []string
		for i++; i < len(lines) && lines[i] != ""; i++ {
			want = append(want, lines[i])
		}
		cases = append(cases, &Case{Cmd: l, Want: strings.Join(want, "\n")})
	}
	return cases, string(b)
}

// Rewrite keeps the comments and commands of raw and replaces every
// expected output with the output its case produced.
func Rewrite(raw string, cases []*Case) string {
	var b strings.Builder
	lines := strings.Split(raw, "\n")
	ci := 0
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			b.WriteString(l + "\n")
			continue
		}
		c := cases[ci]
		ci++
		b.WriteString(c.Cmd + "\n----\n" + c.Got + "\n")
		for i += 2; i < len(lines) && lines[i] != ""; i++ {
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}
