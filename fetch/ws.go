package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"time"

	"github.com/coder/websocket"
)

// wsFetcher serves wss:// (and ws:// when plaintext is allowed). The
// content is the concatenation of the binary messages the server sends
// until it closes with status 1000 (normal closure). A text message or any
// other close ends the fetch with an error, so a cut stream is never taken
// for a complete one.
type wsFetcher struct {
	client         *http.Client
	dialTimeout    time.Duration
	allowPlaintext bool
}

var _ Fetcher = (*wsFetcher)(nil)

func newWSFetcher(cfg Config) *wsFetcher {
	return &wsFetcher{
		client:         &http.Client{Transport: newTransport(cfg)},
		dialTimeout:    cfg.DialTimeout,
		allowPlaintext: cfg.AllowPlaintext,
	}
}

func (f *wsFetcher) Fetch(ctx context.Context, uri string, limit int64) (io.ReadCloser, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: %q", ErrInvalidURI, uri)
	}
	switch {
	case u.Scheme == "wss":
	case u.Scheme == "ws" && f.allowPlaintext:
	default:
		return nil, fmt.Errorf("%w: %q", ErrUnsupportedScheme, u.Scheme)
	}
	dctx, cancel := context.WithTimeout(ctx, f.dialTimeout)
	conn, resp, err := websocket.Dial(dctx, uri, &websocket.DialOptions{HTTPClient: f.client})
	cancel()
	if err != nil {
		if resp != nil && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone) {
			return nil, fmt.Errorf("%w: %s: %s", ErrNotFound, u.Redacted(), resp.Status)
		}
		return nil, cannotConnect(err)
	}
	// One message larger than the whole limit is refused by the library;
	// the Registry enforces the total across messages.
	conn.SetReadLimit(min(limit, math.MaxInt64-1) + 1)
	return &wsReader{ctx: ctx, conn: conn}, nil
}

type wsReader struct {
	ctx  context.Context
	conn *websocket.Conn
	cur  io.Reader
	err  error
}

func (r *wsReader) Read(p []byte) (int, error) {
	for r.err == nil {
		if r.cur == nil {
			typ, msg, err := r.conn.Reader(r.ctx)
			if err != nil {
				if websocket.CloseStatus(err) == websocket.StatusNormalClosure {
					r.err = io.EOF
				} else if websocket.CloseStatus(err) == websocket.StatusMessageTooBig {
					r.err = fmt.Errorf("%w: one message exceeds the limit", ErrTooLarge)
				} else {
					r.err = fmt.Errorf("%w: stream ended without a normal close: %w", ErrUnreachable, err)
				}
				break
			}
			if typ != websocket.MessageBinary {
				r.err = fmt.Errorf("%w: text message in a binary stream", ErrBadResponse)
				r.conn.Close(websocket.StatusUnsupportedData, "binary messages only")
				break
			}
			r.cur = msg
		}
		n, err := r.cur.Read(p)
		if errors.Is(err, io.EOF) {
			r.cur = nil
			err = nil
		}
		if err != nil {
			if errors.Is(err, websocket.ErrMessageTooBig) {
				r.err = fmt.Errorf("%w: one message exceeds the limit", ErrTooLarge)
			} else {
				r.err = fmt.Errorf("%w: %w", ErrUnreachable, err)
			}
			return n, r.err
		}
		if n > 0 || len(p) == 0 {
			return n, nil
		}
	}
	return 0, r.err
}

func (r *wsReader) Close() error {
	// A reader closed early (limit reached, hash check elsewhere) does not
	// wait for the close handshake.
	return r.conn.CloseNow()
}
