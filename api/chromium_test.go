package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/jobmesh/jobmesh/internal/wait"
)

// chromiumPath is Debian's chromium package; CI installs it.
const chromiumPath = "/usr/bin/chromium"

// browser is a headless Chromium driven over the DevTools protocol. The
// page under test keeps an event stream open, which stops Chromium's
// virtual time, so --dump-dom with --virtual-time-budget never finishes
// and --dump-dom alone dumps before the page's scripts have run; instead
// the test polls a marker the page sets, then reads the DOM and takes the
// screenshot over the protocol.
type browser struct {
	t    *testing.T
	conn *websocket.Conn
	next int
}

// startBrowser runs Chromium with a window of w×h pixels and attaches to
// its first page. It skips the test when Chromium is not installed, unless
// JOBMESH_REQUIRE_CHROMIUM is set (CI sets it: there the test never skips).
func startBrowser(t *testing.T, w, h int) *browser {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("JOBMESH_REQUIRE_CHROMIUM") != "" {
			t.Fatalf("%s is required (JOBMESH_REQUIRE_CHROMIUM is set): %v", chromiumPath, err)
		}
		t.Skipf("%s is not installed (apt-get install chromium): %v", chromiumPath, err)
	}
	// Chromium now and then exits as it starts, before it listens, with
	// nothing on stderr but warnings; a second start is the fix.
	var (
		port string
		ctx  context.Context
		err  error
	)
	for try := 1; ; try++ {
		if ctx, port, err = launchChromium(t, w, h); err == nil {
			break
		}
		if try == 2 {
			t.Fatal(err)
		}
		t.Logf("starting chromium again: %v", err)
	}
	var pageURL string
	wait.Until(t, 30*time.Second, func() error {
		resp, err := http.Get("http://127.0.0.1:" + port + "/json/list")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var targets []struct {
			Type string `json:"type"`
			WS   string `json:"webSocketDebuggerUrl"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&targets); err != nil {
			return err
		}
		for _, tg := range targets {
			if tg.Type == "page" && tg.WS != "" {
				pageURL = tg.WS
				return nil
			}
		}
		return errors.New("no page target yet")
	})
	conn, _, err := websocket.Dial(ctx, pageURL, nil)
	if err != nil {
		t.Fatalf("attaching to %s: %v", pageURL, err)
	}
	conn.SetReadLimit(64 << 20) // screenshots
	t.Cleanup(func() { conn.CloseNow() })
	b := &browser{t: t, conn: conn}
	b.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": w, "height": h, "deviceScaleFactor": 1, "mobile": false}, nil)
	return b
}

// launchChromium starts Chromium with a window of w×h pixels and waits for
// its DevTools port; the returned context ends when the test does. An
// error: Chromium exited before it listened (its stderr).
func launchChromium(t *testing.T, w, h int) (context.Context, string, error) {
	t.Helper()
	profile := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, chromiumPath,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		// The closed network refuses Chromium's own connections; these
		// keep it from trying.
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+profile, "--remote-debugging-port=0",
		fmt.Sprintf("--window-size=%d,%d", w, h), "--hide-scrollbars",
		"about:blank")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cancel()
		<-exited
	})

	// Chromium writes its DevTools port to the profile once it listens.
	var port string
	var gone error
	wait.Until(t, 30*time.Second, func() error {
		select {
		case <-exited:
			gone = fmt.Errorf("chromium exited: %s", stderr.String())
			return nil
		default:
		}
		b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
		if err != nil {
			return err
		}
		port, _, _ = strings.Cut(string(b), "\n")
		if port == "" {
			return errors.New("no port yet")
		}
		return nil
	})
	return ctx, port, gone
}

// call sends one DevTools command and decodes its result into out.
func (b *browser) call(method string, params any, out any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b.next++
	id := b.next
	if err := wsjson.Write(ctx, b.conn, map[string]any{"id": id, "method": method, "params": params}); err != nil {
		b.t.Fatalf("%s: %v", method, err)
	}
	for {
		var msg struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := wsjson.Read(ctx, b.conn, &msg); err != nil {
			b.t.Fatalf("%s: %v", method, err)
		}
		if msg.ID != id {
			continue // an event or another answer
		}
		if msg.Error != nil {
			b.t.Fatalf("%s: %s", method, msg.Error.Message)
		}
		if out != nil {
			if err := json.Unmarshal(msg.Result, out); err != nil {
				b.t.Fatalf("%s: %v", method, err)
			}
		}
		return
	}
}

// eval evaluates a JavaScript expression in the page and returns its
// value as JSON.
func (b *browser) eval(expr string) json.RawMessage {
	b.t.Helper()
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	b.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &res)
	if res.Exception != nil {
		b.t.Fatalf("evaluating %q: %s", expr, res.Exception.Text)
	}
	return res.Result.Value
}

func (b *browser) navigate(url string) {
	b.t.Helper()
	b.call("Page.navigate", map[string]any{"url": url}, nil)
}

// dom is the page's current DOM as HTML.
func (b *browser) dom() string {
	b.t.Helper()
	var s string
	if err := json.Unmarshal(b.eval("document.documentElement.outerHTML"), &s); err != nil {
		b.t.Fatal(err)
	}
	return s
}

// screenshot is a PNG of the viewport.
func (b *browser) screenshot() []byte {
	b.t.Helper()
	var res struct {
		Data string `json:"data"`
	}
	b.call("Page.captureScreenshot", map[string]any{"format": "png"}, &res)
	png, err := base64.StdEncoding.DecodeString(res.Data)
	if err != nil {
		b.t.Fatal(err)
	}
	return png
}
