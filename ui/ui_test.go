package ui_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/jobmesh/jobmesh/ui"
)

func TestHandlerServesTheDashboard(t *testing.T) {
	srv := httptest.NewServer(ui.Handler())
	defer srv.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	resp, err := client.Get(srv.URL + "/ui")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/ui/" {
		t.Fatalf("/ui: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	for path, ctype := range map[string]string{
		"/ui/":          "text/html",
		"/ui/style.css": "text/css",
		"/ui/app.js":    "text/javascript",
	} {
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), ctype) || len(body) == 0 {
			t.Fatalf("%s: %d %q, %d bytes", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Fatalf("%s: CSP %q", path, csp)
		}
	}
	resp, err = client.Get(srv.URL + "/ui/nope.js")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("missing file: %d", resp.StatusCode)
	}
}

// TestNoExternalFetches: the dashboard works on a machine without
// internet, so no file names another host.
func TestNoExternalFetches(t *testing.T) {
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|@import|cdn`)
	n := 0
	err := fs.WalkDir(ui.Files(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		b, err := fs.ReadFile(ui.Files(), path)
		if err != nil {
			return err
		}
		if m := external.Find(b); m != nil {
			t.Errorf("%s refers outside the node: %q", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("%d files embedded, want index.html, style.css and app.js", n)
	}
}
