package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestPublicAddress(t *testing.T) {
	for addr, public := range map[string]bool{
		"8.8.8.8":          true,
		"1.1.1.1":          true,
		"2606:4700::1111":  true,
		"64:ff9b::808:808": true, // NAT64 of 8.8.8.8
		"2002:808:808::1":  true, // 6to4 of 8.8.8.8

		"127.0.0.1":              false,
		"127.1.2.3":              false,
		"::1":                    false,
		"0.0.0.0":                false,
		"::":                     false,
		"10.0.0.1":               false,
		"172.16.5.4":             false,
		"172.31.255.255":         false,
		"192.168.1.1":            false,
		"169.254.169.254":        false, // AWS, GCP, Azure metadata
		"100.100.100.200":        false, // Alibaba metadata (CGNAT range)
		"100.64.0.1":             false,
		"192.0.0.192":            false,
		"fd00:ec2::254":          false, // AWS IPv6 metadata
		"fc00::1":                false,
		"fe80::1":                false,
		"fe80::1%eth0":           false,
		"224.0.0.1":              false,
		"239.255.255.250":        false,
		"255.255.255.255":        false,
		"ff02::1":                false,
		"::ffff:127.0.0.1":       false, // IPv4-mapped loopback
		"::ffff:10.0.0.1":        false,
		"::ffff:169.254.169.254": false,
		"::127.0.0.1":            false, // IPv4-compatible
		"64:ff9b::7f00:1":        false, // NAT64 of 127.0.0.1
		"64:ff9b::a9fe:a9fe":     false, // NAT64 of 169.254.169.254
		"2002:7f00:1::":          false, // 6to4 of 127.0.0.1
		"2002:a00:1::":           false, // 6to4 of 10.0.0.1
	} {
		if got := PublicAddress(netip.MustParseAddr(addr)); got != public {
			t.Errorf("PublicAddress(%s) = %v, want %v", addr, got, public)
		}
	}
	if PublicAddress(netip.Addr{}) {
		t.Error("the zero address is public")
	}
}

// guardedRegistry is a Registry with the default guard, every network
// scheme enabled, and trust in srv's certificate.
func guardedRegistry(t *testing.T, allowPrivate bool, tlsSrv *httptest.Server) *Registry {
	t.Helper()
	return newTestRegistry(t, func(c *Config) {
		c.AllowPrivateAddresses = allowPrivate
		c.AllowPlaintext = true
		c.Timeout, c.DialTimeout = 5*time.Second, 2*time.Second
		c.TLSConfig = tlsSrv.Client().Transport.(*http.Transport).TLSClientConfig
		c.SFTP = SFTPConfig{Password: "pw", HostKeyFingerprint: "SHA256:AAAA"}
	})
}

// closedPort returns a 127.0.0.1 port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return fmt.Sprint(port)
}

// TestGuardRefusesPrivateDestinations is the port scanner of issue 19: a
// job's URI naming a loopback, private, link-local or metadata address, or
// a name that resolves to one, is refused before any connection, for every
// network scheme, with one error text that says nothing about the port.
func TestGuardRefusesPrivateDestinations(t *testing.T) {
	content := testData(1000)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(content) }))
	t.Cleanup(srv.Close)
	open := srv.Listener.Addr().(*net.TCPAddr).Port
	closed := closedPort(t)
	r := guardedRegistry(t, false, srv)
	ctx := context.Background()

	var hosts []string
	for _, h := range []string{"127.0.0.1", "[::1]", "10.1.2.3", "192.168.1.1", "172.20.0.1", "169.254.169.254", "[fd00:ec2::254]", "100.100.100.200", "[::ffff:127.0.0.1]", "localhost"} {
		hosts = append(hosts, fmt.Sprintf("%s:%d", h, open), h+":"+closed)
	}
	var texts []string
	for _, host := range hosts {
		for _, uri := range []string{"https://" + host + "/d", "http://" + host + "/d", "wss://" + host + "/d", "ws://" + host + "/d", "sftp://u@" + host + "/d"} {
			start := time.Now()
			_, err := r.Fetch(ctx, uri, 1<<20)
			if err != ErrUnreachable {
				t.Errorf("Fetch(%s) = %v, want exactly ErrUnreachable", uri, err)
				continue
			}
			// Refused before dialling: no packet to 10.x or 169.254.x
			// waits for a timeout.
			if d := time.Since(start); d > time.Second {
				t.Errorf("Fetch(%s) took %v: it dialled", uri, d)
			}
			texts = append(texts, err.Error())
		}
	}
	for _, s := range texts {
		if s != "fetch: cannot reach host" {
			t.Fatalf("error text %q, want the generic one", s)
		}
	}
	forbidden := 0.0
	for _, scheme := range []string{"https", "http", "wss", "ws", "sftp"} {
		forbidden += counterValue(t, r.metrics.failures.WithLabelValues(scheme, "forbidden_address"))
	}
	if want := float64(len(hosts) * 5); forbidden != want {
		t.Errorf("forbidden_address refusals counted %v, want %v", forbidden, want)
	}

	// With the switch on, the same server is fetched.
	dev := guardedRegistry(t, true, srv)
	got, err := dev.FetchVerified(ctx, fmt.Sprintf("https://127.0.0.1:%d/d", open), sha256.Sum256(content), 1<<20)
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("with AllowPrivateAddresses: %v", err)
	}
	plain := httptest.NewServer(srv.Config.Handler)
	t.Cleanup(plain.Close)
	port := plain.Listener.Addr().(*net.TCPAddr).Port
	if _, err := dev.FetchVerified(ctx, fmt.Sprintf("http://localhost:%d/d", port), sha256.Sum256(content), 1<<20); err != nil {
		t.Fatalf("localhost with AllowPrivateAddresses: %v", err)
	}
}

// TestConnectErrorsAreGeneric: where the guard lets a connection through
// (here with private addresses allowed), a closed port, an open port that
// does not speak TLS, one that does not speak SSH and an untrusted
// certificate all give the same error text.
func TestConnectErrorsAreGeneric(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	r := guardedRegistry(t, true, srv)
	strict := newTestRegistry(t, func(c *Config) { c.DialTimeout = 2 * time.Second }) // no trust in srv
	// An open port that accepts and says nothing useful.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("220 hello\r\n"))
			c.Close()
		}
	}()
	garbage := ln.Addr().String()
	closed := "127.0.0.1:" + closedPort(t)
	ctx := context.Background()
	cases := []struct {
		r   *Registry
		uri string
	}{
		{r, "https://" + closed + "/x"},
		{r, "https://" + garbage + "/x"},
		{r, "wss://" + closed + "/x"},
		{r, "wss://" + garbage + "/x"},
		{r, "sftp://u@" + closed + "/x"},
		{r, "sftp://u@" + garbage + "/x"},
		{strict, srv.URL + "/x"},
	}
	for _, c := range cases {
		_, err := c.r.Fetch(ctx, c.uri, 1<<20)
		if err != ErrUnreachable || err.Error() != "fetch: cannot reach host" {
			t.Errorf("Fetch(%s) = %v, want the generic ErrUnreachable", c.uri, err)
		}
	}
}

// TestGuardChecksRedirects: a redirect is a new connection and goes
// through the same check. The test treats only 127.0.0.1 as public, so
// that a server there can redirect to 127.0.0.2.
func TestGuardChecksRedirects(t *testing.T) {
	old := publicAddress
	publicAddress = func(a netip.Addr) bool { return a == netip.MustParseAddr("127.0.0.1") }
	t.Cleanup(func() { publicAddress = old })

	inner, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 on this host: %v", err)
	}
	reached := make(chan struct{}, 10)
	innerSrv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached <- struct{}{}
		w.Write([]byte("secret"))
	})}
	go innerSrv.Serve(inner)
	t.Cleanup(func() { innerSrv.Close() })
	innerURL := "http://" + inner.Addr().String() + "/metadata"

	outer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, innerURL, http.StatusFound)
	}))
	t.Cleanup(outer.Close)
	r := newTestRegistry(t, func(c *Config) { c.AllowPrivateAddresses = false; c.AllowPlaintext = true })
	if !strings.HasPrefix(outer.URL, "http://127.0.0.1:") {
		t.Fatalf("test server at %s", outer.URL)
	}
	if _, err := r.Fetch(context.Background(), outer.URL+"/start", 1<<20); err != ErrUnreachable {
		t.Fatalf("redirect to a private address: %v, want ErrUnreachable", err)
	}
	if _, err := r.Fetch(context.Background(), innerURL, 1<<20); err != ErrUnreachable {
		t.Fatalf("direct fetch of the private address: %v", err)
	}
	select {
	case <-reached:
		t.Fatal("the private server was reached")
	default:
	}
	u, _ := url.Parse(innerURL)
	if PublicAddress(netip.MustParseAddr(u.Hostname())) {
		t.Fatal("127.0.0.2 counted public by the real check")
	}
}

// TestGuardCallerCancel: a caller's cancel stays the caller's.
func TestGuardCallerCancel(t *testing.T) {
	r := newTestRegistry(t, func(c *Config) { c.AllowPrivateAddresses = false })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Fetch(ctx, "https://example.org/x", 10); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled fetch: %v", err)
	}
}
