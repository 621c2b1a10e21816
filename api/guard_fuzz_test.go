package api

import (
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// FuzzHostAllowed: a Host header the guard accepts names, as a browser
// reads it, localhost, a loopback address or the allowed host; never
// another name (a DNS-rebinding page's).
func FuzzHostAllowed(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1:5001", "localhost", "[::1]:80", "node.lan", "NODE.LAN:1", "attacker.example",
		"127.0.0.1.attacker.example", "localhost.attacker.example:5001", "[::ffff:127.0.0.1]:1",
		"0.0.0.0:5001", "[::]:1", "127.1", "2130706433", "", ":5001", "[localhost]", "node.lan@evil",
		"127.0.0.0:@", "localhost:x", "localhost:1/evil", "node.lan:99999",
	} {
		f.Add(s)
	}
	h := &Handler{cfg: Config{AllowedHosts: []string{"node.lan"}}}
	f.Fuzz(func(t *testing.T, host string) {
		if !h.hostAllowed(host) {
			return
		}
		u, err := url.Parse("http://" + host + "/")
		if err != nil {
			return // a browser sends no such Host
		}
		name := strings.ToLower(u.Hostname())
		if a, err := netip.ParseAddr(name); err == nil && a.Unmap().IsLoopback() {
			return
		}
		if name != "localhost" && name != "node.lan" {
			t.Fatalf("Host %q (name %q) was accepted", host, name)
		}
	})
}

// FuzzOrigin: a request whose Origin the guard accepts comes from the
// API's own origin or the allowed one.
func FuzzOrigin(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:5001", "https://dash.example:8443", "http://attacker.example", "null", "",
		"HTTP://127.0.0.1:5001", "http://127.0.0.1:5001/", "http://127.0.0.1:50011", "https://dash.example:8443/",
	} {
		f.Add(s)
	}
	h := &Handler{cfg: Config{AllowedOrigins: []string{"https://dash.example:8443"}}}
	f.Fuzz(func(t *testing.T, origin string) {
		r, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:5001/v1/jobs", nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Origin", origin)
		if h.checkOrigin(r) != nil || origin == "" {
			return
		}
		if o := strings.ToLower(origin); o != "http://127.0.0.1:5001" && o != "https://dash.example:8443" {
			t.Fatalf("Origin %q was accepted", origin)
		}
	})
}
