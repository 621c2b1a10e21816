package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wsMux serves content as WebSocket streams that end in different ways.
func wsMux(t *testing.T, content []byte) *http.ServeMux {
	mux := http.NewServeMux()
	handle := func(path string, serve func(ctx context.Context, c *websocket.Conn)) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			c, err := websocket.Accept(w, r, nil)
			if err != nil {
				t.Errorf("accept: %v", err)
				return
			}
			defer c.CloseNow()
			serve(r.Context(), c)
		})
	}
	sendAll := func(ctx context.Context, c *websocket.Conn) bool {
		for i := 0; i < len(content); i += 7000 { // uneven message sizes
			if err := c.Write(ctx, websocket.MessageBinary, content[i:min(i+7000, len(content))]); err != nil {
				return false
			}
		}
		return true
	}
	handle("/ok", func(ctx context.Context, c *websocket.Conn) {
		if sendAll(ctx, c) {
			c.Close(websocket.StatusNormalClosure, "")
		}
	})
	handle("/cut", func(ctx context.Context, c *websocket.Conn) {
		c.Write(ctx, websocket.MessageBinary, content[:1000])
		// CloseNow drops the TCP connection without a close frame.
	})
	handle("/going-away", func(ctx context.Context, c *websocket.Conn) {
		c.Write(ctx, websocket.MessageBinary, content[:1000])
		c.Close(websocket.StatusGoingAway, "restarting")
	})
	handle("/text", func(ctx context.Context, c *websocket.Conn) {
		c.Write(ctx, websocket.MessageText, []byte("hello"))
		c.Close(websocket.StatusNormalClosure, "")
	})
	handle("/stall", func(ctx context.Context, c *websocket.Conn) {
		c.Write(ctx, websocket.MessageBinary, content[:1000])
		<-ctx.Done() // until the client gives up
	})
	return mux
}

func TestWebSocketFetcherTimeout(t *testing.T) {
	srv := httptest.NewServer(wsMux(t, testData(2000)))
	t.Cleanup(srv.Close)
	r := newTestRegistry(t, func(c *Config) { c.AllowPlaintext = true; c.Timeout = 200 * time.Millisecond })
	_, err := r.FetchVerified(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http")+"/stall", [32]byte{}, 1<<20)
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("stalled stream: %v, want ErrUnreachable", err)
	}
}

func TestWebSocketFetcher(t *testing.T) {
	content := testData(100_000)
	sum := sha256.Sum256(content)
	mux := wsMux(t, content)
	srv := httptest.NewTLSServer(mux)
	plain := httptest.NewServer(mux)
	t.Cleanup(func() { srv.Close(); plain.Close() })
	wss := "wss" + strings.TrimPrefix(srv.URL, "https")
	ws := "ws" + strings.TrimPrefix(plain.URL, "http")
	tlsCfg := srv.Client().Transport.(*http.Transport).TLSClientConfig
	r := newTestRegistry(t, func(c *Config) { c.TLSConfig = tlsCfg })
	ctx := context.Background()

	got, err := r.FetchVerified(ctx, wss+"/ok", sum, int64(len(content)))
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("wss: %d bytes, %v", len(got), err)
	}
	// The limit holds across messages and inside one message.
	if _, err := r.FetchVerified(ctx, wss+"/ok", sum, 50_000); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over limit across messages: %v", err)
	}
	if _, err := r.FetchVerified(ctx, wss+"/ok", sum, 3000); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over limit in one message: %v", err)
	}
	for path, want := range map[string]error{
		"/cut":        ErrUnreachable, // no close frame: the stream may be incomplete
		"/going-away": ErrUnreachable, // abnormal close code
		"/text":       ErrBadResponse,
	} {
		if _, err := r.FetchVerified(ctx, wss+path, sum, 1<<20); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", path, err, want)
		}
	}
	if _, err := r.Fetch(ctx, wss+"/missing", 1<<20); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	if _, err := r.Fetch(ctx, ws+"/ok", 1<<20); !errors.Is(err, ErrUnsupportedScheme) {
		t.Fatalf("ws:// without AllowPlaintext: %v", err)
	}
	loose := newTestRegistry(t, func(c *Config) { c.AllowPlaintext = true })
	if got, err := loose.FetchVerified(ctx, ws+"/ok", sum, 1<<20); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("ws:// with AllowPlaintext: %v", err)
	}
	closed := httptest.NewServer(mux)
	closed.Close()
	if _, err := loose.Fetch(ctx, "ws"+strings.TrimPrefix(closed.URL, "http")+"/ok", 1<<20); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("closed server: %v", err)
	}
}
