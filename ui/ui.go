package ui

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// Prefix is the path the dashboard is served under.
const Prefix = "/ui/"

// Files returns the dashboard's files (index.html, style.css, app.js).
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree always holds static/
	}
	return sub
}

// Handler serves the dashboard under Prefix and redirects the bare
// "/ui" to it.
func Handler() http.Handler {
	files := http.StripPrefix(Prefix, http.FileServerFS(Files()))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ui" {
			http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
			return
		}
		h := w.Header()
		// The page only talks to its own node.
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' blob: data:; connect-src 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
