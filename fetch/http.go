package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// httpFetcher serves https:// (and http:// when plaintext is allowed).
type httpFetcher struct {
	client         *http.Client
	allowPlaintext bool
}

var _ Fetcher = (*httpFetcher)(nil)

func newHTTPFetcher(cfg Config) *httpFetcher {
	tr := newTransport(cfg)
	tr.ResponseHeaderTimeout = cfg.DialTimeout
	f := &httpFetcher{allowPlaintext: cfg.AllowPlaintext}
	f.client = &http.Client{
		Transport: tr,
		// A redirect must not downgrade to plaintext or leave HTTP.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("too many redirects")
			}
			if req.URL.Scheme != "https" && !(req.URL.Scheme == "http" && f.allowPlaintext) {
				return fmt.Errorf("%w: redirect to %s:// refused", ErrUnsupportedScheme, req.URL.Scheme)
			}
			return nil
		},
	}
	return f
}

func (f *httpFetcher) Fetch(ctx context.Context, uri string, limit int64) (io.ReadCloser, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: %q", ErrInvalidURI, uri)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && f.allowPlaintext:
	default:
		return nil, fmt.Errorf("%w: %q", ErrUnsupportedScheme, u.Scheme)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidURI, err)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		if errors.Is(err, ErrUnsupportedScheme) {
			return nil, err
		}
		return nil, cannotConnect(err)
	}
	switch {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %s: %s", ErrNotFound, u.Redacted(), resp.Status)
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %s: %s", ErrUnreachable, u.Redacted(), resp.Status)
	default:
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %s: %s", ErrBadResponse, u.Redacted(), resp.Status)
	}
	// Content-Length, when given, lets an oversized file fail before its
	// body is read; the Registry still counts the bytes while streaming.
	if resp.ContentLength > limit {
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %d bytes > %d", ErrTooLarge, resp.ContentLength, limit)
	}
	return resp.Body, nil
}

// newTransport is the HTTP transport of the https:// and wss:// fetchers:
// every connection through the guarded dialer, and no proxy from the
// environment, since a proxy would make the connection to the
// destination on the node's behalf, past the guard.
func newTransport(cfg Config) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = newDialer(cfg).DialContext
	tr.TLSHandshakeTimeout = cfg.DialTimeout
	if cfg.TLSConfig != nil {
		tr.TLSClientConfig = cfg.TLSConfig.Clone()
	}
	return tr
}
