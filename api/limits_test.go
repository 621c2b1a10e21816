package api_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
)

// raw is a plain TCP client of the API, to send requests as slowly as an
// attacker would.
type raw struct {
	t    *testing.T
	conn net.Conn
}

func dialRaw(t *testing.T, addr string) *raw {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &raw{t: t, conn: conn}
}

func (c *raw) send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, s); err != nil {
		c.t.Fatal(err)
	}
}

// closedWithin reads until the server closes the connection, and fails
// when it is still open after limit. It returns what was read.
func (c *raw) closedWithin(limit time.Duration) string {
	c.t.Helper()
	if err := c.conn.SetReadDeadline(time.Now().Add(limit)); err != nil {
		c.t.Fatal(err)
	}
	b, err := io.ReadAll(c.conn)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.t.Fatalf("the server kept the connection open for %s (read %q)", limit, b)
	}
	return string(b)
}

// limitsConfig has short timeouts, so that the test sees them act.
func limitsConfig() api.Config {
	cfg := api.DefaultConfig()
	cfg.Token = strings.Repeat("k", 64)
	cfg.ReadHeaderTimeout = api.Duration(300 * time.Millisecond)
	cfg.ReadTimeout = api.Duration(300 * time.Millisecond)
	cfg.UploadTimeout = api.Duration(1500 * time.Millisecond)
	cfg.WriteTimeout = api.Duration(300 * time.Millisecond)
	cfg.IdleTimeout = api.Duration(300 * time.Millisecond)
	cfg.Events.Heartbeat = 50 * time.Millisecond
	// Half of the streams, 4, are for anonymous clients together.
	cfg.MaxEventStreams, cfg.MaxEventStreamsPerClient = 8, 2
	return cfg
}

// TestServerTimeouts: a request body sent too slowly, a stalled upload and
// an idle keep-alive connection are closed by the server within their
// timeouts; an authenticated upload may take longer than ReadTimeout, an
// event stream lives past the read and write timeouts, and a client
// without the token never gets the upload's longer deadline.
func TestServerTimeouts(t *testing.T) {
	m := meshtest.New(t, localmesh.Options{Processors: 1})
	n, _ := walletClient(t, m, nil)
	cfg := limitsConfig()
	h, err := api.New(n.APIDeps(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := api.Listen("127.0.0.1:0", h, cfg, meshtest.Logger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	addr := srv.Addr()
	// Slack over a timeout for the server to act on it, on a loaded machine.
	const slack = 3 * time.Second
	auth := "Authorization: Bearer " + cfg.Token + "\r\n"

	t.Run("slow body", func(t *testing.T) {
		c := dialRaw(t, addr)
		c.send("POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"code\":")
		c.closedWithin(time.Duration(cfg.ReadTimeout) + slack)
	})
	t.Run("idle keep-alive", func(t *testing.T) {
		c := dialRaw(t, addr)
		c.send("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		if got := c.closedWithin(time.Duration(cfg.IdleTimeout) + slack); !strings.HasPrefix(got, "HTTP/1.1 200") {
			t.Fatalf("answer %q", got)
		}
	})
	t.Run("slow headers", func(t *testing.T) {
		c := dialRaw(t, addr)
		c.send("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
		c.closedWithin(time.Duration(cfg.ReadHeaderTimeout) + slack)
	})
	t.Run("stalled upload", func(t *testing.T) {
		c := dialRaw(t, addr)
		c.send("POST /v1/content HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + "Content-Type: application/octet-stream\r\nContent-Length: 1000\r\n\r\nabc")
		c.closedWithin(time.Duration(cfg.UploadTimeout) + slack)
	})
	t.Run("upload without the token", func(t *testing.T) {
		c := dialRaw(t, addr)
		c.send("POST /v1/content HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: 1000\r\n\r\nabc")
		if got := c.closedWithin(time.Duration(cfg.ReadTimeout) + slack); !strings.HasPrefix(got, "HTTP/1.1 401") {
			t.Fatalf("answer %q", got)
		}
	})
	t.Run("paced upload", func(t *testing.T) {
		// Chunks every ReadTimeout/3 for three ReadTimeouts: slower than
		// ReadTimeout allows, within UploadTimeout.
		c := dialRaw(t, addr)
		c.send("POST /v1/content HTTP/1.1\r\nHost: 127.0.0.1\r\n" + auth + "Content-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		tick := time.NewTicker(time.Duration(cfg.ReadTimeout) / 3)
		defer tick.Stop()
		for range 9 {
			<-tick.C
			c.send("4\r\ndata\r\n")
		}
		c.send("0\r\n\r\n")
		if err := c.conn.SetReadDeadline(time.Now().Add(time.Duration(cfg.UploadTimeout) + slack)); err != nil {
			t.Fatal(err)
		}
		status, err := bufio.NewReader(c.conn).ReadString('\n')
		if err != nil || !strings.HasPrefix(status, "HTTP/1.1 201") {
			t.Fatalf("paced upload: %q (%v)", status, err)
		}
	})
	t.Run("event stream", func(t *testing.T) {
		// Heartbeats for three times the read and write timeouts: the
		// stream is neither cut nor cancelled.
		s := openSSE(t, "http://"+addr+"/v1/events")
		start := time.Now()
		for time.Since(start) < 3*time.Duration(cfg.ReadTimeout) {
			select {
			case <-s.msgs:
			case err := <-s.err:
				t.Fatalf("the stream ended after %s: %v", time.Since(start), err)
			case <-time.After(10 * cfg.Events.Heartbeat):
				t.Fatal("no heartbeat")
			}
		}
	})
}

// clientFrom returns an HTTP client whose connections come from the
// loopback address ip, so that the server sees another client.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// TestEventStreamLimits: one client's idle streams cannot lock others out.
// A client gets MaxStreamsPerClient streams, then 429; another address
// still gets its own; clients without credentials together get
// MaxAnonymousStreams, and a client with the token still gets streams
// when they are all taken.
func TestEventStreamLimits(t *testing.T) {
	m := meshtest.New(t, localmesh.Options{Processors: 1})
	cfg := limitsConfig()
	h, err := api.New(m.Bootstrap().Node.APIDeps(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := api.Listen("127.0.0.1:0", h, cfg, meshtest.Logger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	url := "http://" + srv.Addr() + "/v1/events"
	reg := m.Bootstrap().Node.Metrics

	open := func(hc *http.Client, token string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	want := func(resp *http.Response, status int, what string) {
		t.Helper()
		if resp.StatusCode != status {
			var b []byte
			if resp.StatusCode != http.StatusOK { // a stream's body never ends
				b, _ = io.ReadAll(resp.Body)
			}
			t.Fatalf("%s: %d %s, want %d", what, resp.StatusCode, b, status)
		}
		if status == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
			t.Fatalf("%s: 429 without Retry-After", what)
		}
	}
	a, b, c, d := clientFrom("127.0.0.1"), clientFrom("127.0.0.2"), clientFrom("127.0.0.3"), clientFrom("127.0.0.4")
	refusedBefore := counter(t, reg, "jobmesh_api_refusals_total", "reason", "stream_limit")

	var aStreams []*http.Response
	for i := range cfg.MaxEventStreamsPerClient {
		r := open(a, "")
		want(r, http.StatusOK, fmt.Sprintf("client A's stream %d", i+1))
		aStreams = append(aStreams, r)
	}
	want(open(a, ""), http.StatusTooManyRequests, "client A's stream over its limit")
	for i := range cfg.MaxEventStreamsPerClient {
		want(open(b, ""), http.StatusOK, fmt.Sprintf("client B's stream %d, with A at its limit", i+1))
	}
	want(open(c, ""), http.StatusTooManyRequests, "client C's stream with the anonymous streams taken")
	for i := range cfg.MaxEventStreamsPerClient {
		want(open(d, cfg.Token), http.StatusOK, fmt.Sprintf("the token's stream %d, with the anonymous streams taken", i+1))
	}
	want(open(d, cfg.Token), http.StatusTooManyRequests, "the token's stream over its limit")
	if got := counter(t, reg, "jobmesh_api_refusals_total", "reason", "stream_limit"); got != refusedBefore+3 {
		t.Fatalf("stream_limit refusals went from %v to %v, want +3", refusedBefore, got)
	}

	// A stream that ends frees its slot.
	aStreams[0].Body.Close()
	wait.Until(t, 10*time.Second, func() error {
		r := open(a, "")
		if r.StatusCode != http.StatusOK {
			r.Body.Close()
			return fmt.Errorf("client A's new stream: %d", r.StatusCode)
		}
		return nil
	})
}
