package fetch

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"sync"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/prometheus/client_golang/prometheus"
)

// Fetcher opens the content a URI names. The returned reader yields at most
// limit bytes and fails with ErrTooLarge past it; the caller closes it.
type Fetcher interface {
	Fetch(ctx context.Context, uri string, limit int64) (io.ReadCloser, error)
}

// IPFS is the block layer ipfs:// URIs read through: the node plugs in its
// own (UnixFS over bitswap). UnixFS adapts any DAG service.
type IPFS interface {
	Cat(ctx context.Context, c cid.Cid) (io.ReadCloser, error)
}

// PathResolver is implemented by an IPFS that can resolve ipfs://CID/path
// URIs. Without it only bare ipfs://CID URIs work.
type PathResolver interface {
	ResolvePath(ctx context.Context, root cid.Cid, segments []string) (cid.Cid, error)
}

// Sentinel errors, matched with errors.Is.
var (
	ErrUnsupportedScheme = errors.New("fetch: unsupported or disabled URI scheme")
	ErrInvalidURI        = errors.New("fetch: invalid URI")
	ErrInvalidLimit      = errors.New("fetch: invalid size limit")
	ErrUnreachable       = errors.New("fetch: cannot reach host")
	ErrNotFound          = errors.New("fetch: not found")
	ErrTooLarge          = errors.New("fetch: content exceeds the size limit")
	ErrHashMismatch      = errors.New("fetch: content hash mismatch")
	ErrBadResponse       = errors.New("fetch: bad response from source")
)

// Config configures a Registry and the fetchers New registers.
type Config struct {
	// Timeout bounds a whole fetch, transfer included. Default 5m.
	Timeout time.Duration
	// DialTimeout bounds connecting and handshakes (TCP, TLS, SSH,
	// WebSocket upgrade, HTTP response headers). Default 15s.
	DialTimeout time.Duration
	// AllowPlaintext enables http:// and ws://. Content is hash-checked
	// either way, but plaintext exposes it in transit; meant for local
	// tests and private networks. Default false.
	AllowPlaintext bool
	// AllowPrivateAddresses lets fetches connect to loopback, private
	// (RFC 1918, RFC 4193), link-local, CGNAT, multicast and other
	// non-public addresses, cloud metadata services included. Meant for
	// development and tests whose sources run on 127.0.0.1: on a node whose
	// jobs come from the network it turns the node into a proxy into its
	// own network. Default false: such destinations are refused at dial
	// time (guard.go).
	AllowPrivateAddresses bool
	// TLSConfig is used for https:// and wss://. Default nil: system roots.
	TLSConfig *tls.Config
	// FileRoot is the absolute directory file:// URIs must lie in. A job
	// from the network must not read arbitrary local files. Default "":
	// file:// disabled.
	FileRoot string
	// SFTP holds credentials and host key checks for sftp://. Default:
	// no credentials, sftp:// disabled.
	SFTP SFTPConfig
	// IPFS serves ipfs:// URIs. Default nil: ipfs:// disabled.
	IPFS IPFS
	// Logger receives debug logs of fetches. Default: discard.
	Logger *slog.Logger
	// Registerer receives the fetch metrics. Default nil: no metrics.
	Registerer prometheus.Registerer
}

// SFTPConfig configures sftp:// access. One of PrivateKey and Password
// enables the scheme; then one of KnownHostsFile and HostKeyFingerprint is
// required, since an unchecked host key lets anyone on the path serve data.
type SFTPConfig struct {
	// PrivateKey is a PEM-encoded unencrypted private key. Default none.
	PrivateKey []byte
	// Password for password authentication. Default none.
	Password string
	// KnownHostsFile is an OpenSSH known_hosts file. Default none.
	KnownHostsFile string
	// HostKeyFingerprint is the server's key fingerprint in OpenSSH
	// "SHA256:<base64>" form (ssh-keygen -lf). Default none.
	HostKeyFingerprint string
}

func (s SFTPConfig) enabled() bool { return len(s.PrivateKey) > 0 || s.Password != "" }

// DefaultConfig returns the defaults: https:// only until the caller adds a
// file root, SFTP credentials or an IPFS.
func DefaultConfig() Config {
	return Config{Timeout: 5 * time.Minute, DialTimeout: 15 * time.Second}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	var errs []error
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("fetch: Timeout %v must be positive", c.Timeout))
	}
	if c.DialTimeout <= 0 {
		errs = append(errs, fmt.Errorf("fetch: DialTimeout %v must be positive", c.DialTimeout))
	}
	if c.FileRoot != "" && !filepath.IsAbs(c.FileRoot) {
		errs = append(errs, fmt.Errorf("fetch: FileRoot %q must be absolute", c.FileRoot))
	}
	if c.SFTP.enabled() && c.SFTP.KnownHostsFile == "" && c.SFTP.HostKeyFingerprint == "" {
		errs = append(errs, errors.New("fetch: SFTP needs KnownHostsFile or HostKeyFingerprint"))
	}
	return errors.Join(errs...)
}

// Registry dispatches a URI to the Fetcher registered for its scheme and
// enforces the timeout and size limit around it. It is safe for concurrent
// use.
type Registry struct {
	cfg      Config
	log      *slog.Logger
	metrics  *metrics
	mu       sync.RWMutex
	fetchers map[string]Fetcher
}

// New returns a Registry with the fetchers cfg enables: https:// always,
// http:// and ws:// with AllowPlaintext, wss:// always, file:// with a
// FileRoot, sftp:// with credentials, ipfs:// with an IPFS.
func New(cfg Config) (*Registry, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	r := &Registry{cfg: cfg, log: log, metrics: m, fetchers: map[string]Fetcher{}}

	h := newHTTPFetcher(cfg)
	r.fetchers["https"] = h
	w := newWSFetcher(cfg)
	r.fetchers["wss"] = w
	if cfg.AllowPlaintext {
		r.fetchers["http"] = h
		r.fetchers["ws"] = w
	}
	if cfg.FileRoot != "" {
		r.fetchers["file"] = &fileFetcher{root: cfg.FileRoot}
	}
	if cfg.SFTP.enabled() {
		s, err := newSFTPFetcher(cfg)
		if err != nil {
			return nil, err
		}
		r.fetchers["sftp"] = s
	}
	if cfg.IPFS != nil {
		r.fetchers["ipfs"] = &ipfsFetcher{ipfs: cfg.IPFS}
	}
	return r, nil
}

// Register adds or replaces the Fetcher for a scheme.
func (r *Registry) Register(scheme string, f Fetcher) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fetchers[scheme] = f
}

// Fetch opens uri with at most limit bytes (limit >= 0). The returned
// reader fails with ErrTooLarge once the content exceeds limit, and with
// ErrUnreachable if the Timeout expires while streaming. Close releases the
// connection.
func (r *Registry) Fetch(ctx context.Context, uri string, limit int64) (io.ReadCloser, error) {
	if limit < 0 {
		return nil, fmt.Errorf("%w: %d", ErrInvalidLimit, limit)
	}
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidURI, err)
	}
	r.mu.RLock()
	f, ok := r.fetchers[u.Scheme]
	r.mu.RUnlock()
	if !ok {
		r.metrics.failure(u.Scheme, ErrUnsupportedScheme)
		return nil, fmt.Errorf("%w: %q", ErrUnsupportedScheme, u.Scheme)
	}
	r.metrics.request(u.Scheme)
	caller := ctx
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	rc, err := f.Fetch(ctx, uri, limit)
	if err != nil {
		cancel()
		err = classify(ctx, err)
		r.log.Debug("fetch failed", "scheme", u.Scheme, "host", u.Host, "err", err)
		r.metrics.failure(u.Scheme, err)
		var ce *connectError
		if errors.As(err, &ce) {
			// One answer for every failure to connect: the cause stays
			// in the debug log above.
			err = ErrUnreachable
			if caller.Err() != nil {
				err = caller.Err()
			}
		}
		return nil, err
	}
	return &body{rc: rc, ctx: ctx, cancel: cancel, remaining: limit, scheme: u.Scheme, m: r.metrics}, nil
}

// FetchVerified reads the whole content of uri, at most limit bytes, and
// checks it against the expected SHA-256. It returns the content only when
// it matches (ErrHashMismatch otherwise).
func (r *Registry) FetchVerified(ctx context.Context, uri string, sum [32]byte, limit int64) ([]byte, error) {
	rc, err := r.Fetch(ctx, uri, limit)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	if got := sha256.Sum256(data); got != sum {
		scheme := uri
		if u, err := url.Parse(uri); err == nil {
			scheme = u.Scheme
		}
		r.metrics.failure(scheme, ErrHashMismatch)
		return nil, fmt.Errorf("%w: got %s, want %s", ErrHashMismatch, hex.EncodeToString(got[:]), hex.EncodeToString(sum[:]))
	}
	return data, nil
}

// classify makes sure an error carries one of the sentinels: a known one is
// kept, a timeout or any other failure becomes ErrUnreachable with the cause.
func classify(ctx context.Context, err error) error {
	for _, s := range []error{ErrUnsupportedScheme, ErrInvalidURI, ErrUnreachable, ErrNotFound, ErrTooLarge, ErrHashMismatch, ErrBadResponse} {
		if errors.Is(err, s) {
			return err
		}
	}
	if errors.Is(err, context.Canceled) && ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err // the caller cancelled; not the source's fault
	}
	return fmt.Errorf("%w: %w", ErrUnreachable, err)
}

// body enforces the size limit while streaming and ties the timeout
// context's lifetime to the reader.
type body struct {
	rc        io.ReadCloser
	ctx       context.Context
	cancel    context.CancelFunc
	remaining int64
	scheme    string
	m         *metrics
	err       error // sticky
	closeOnce sync.Once
}

func (b *body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	// Read one byte past the limit to tell "exactly limit" from "more".
	if int64(len(p)) > b.remaining { // not remaining+1: it overflows for limit = MaxInt64
		p = p[:b.remaining+1]
	}
	n, err := b.rc.Read(p)
	if int64(n) > b.remaining {
		n = int(b.remaining)
		b.remaining = 0
		b.m.bytes(b.scheme, n)
		b.err = fmt.Errorf("%w: more than the limit", ErrTooLarge)
		b.m.failure(b.scheme, ErrTooLarge)
		return n, b.err
	}
	b.remaining -= int64(n)
	b.m.bytes(b.scheme, n)
	if err == io.EOF && b.ctx.Err() != nil {
		// Some transports end a body cut by the deadline with a clean EOF;
		// after the deadline nothing counts as complete.
		err = b.ctx.Err()
	}
	if err != nil && err != io.EOF {
		b.err = classify(b.ctx, err)
		b.m.failure(b.scheme, b.err)
		return n, b.err
	}
	return n, err
}

func (b *body) Close() error {
	var err error
	b.closeOnce.Do(func() {
		err = b.rc.Close()
		b.cancel()
	})
	return err
}

// metrics counts fetches per scheme; a nil *metrics counts nothing.
type metrics struct {
	requests *prometheus.CounterVec
	failures *prometheus.CounterVec
	bytesIn  *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "fetch", Name: "requests_total",
			Help: "Fetches started, by URI scheme.",
		}, []string{"scheme"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "fetch", Name: "failures_total",
			Help: "Failed fetches, by URI scheme and reason.",
		}, []string{"scheme", "reason"}),
		bytesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobmesh", Subsystem: "fetch", Name: "bytes_total",
			Help: "Content bytes read, by URI scheme.",
		}, []string{"scheme"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.failures, m.bytesIn} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("fetch: register metrics: %w", err)
		}
	}
	return m, nil
}

func (m *metrics) request(scheme string) {
	if m != nil {
		m.requests.WithLabelValues(scheme).Inc()
	}
}

func (m *metrics) bytes(scheme string, n int) {
	if m != nil && n > 0 {
		m.bytesIn.WithLabelValues(scheme).Add(float64(n))
	}
}

func (m *metrics) failure(scheme string, err error) {
	if m == nil {
		return
	}
	reason := "other"
	for _, r := range []struct {
		err  error
		name string
	}{
		{ErrForbiddenAddress, "forbidden_address"}, {ErrUnsupportedScheme, "unsupported"}, {ErrInvalidURI, "invalid_uri"}, {ErrNotFound, "not_found"},
		{ErrTooLarge, "too_large"}, {ErrHashMismatch, "hash_mismatch"}, {ErrBadResponse, "bad_response"},
		{ErrUnreachable, "unreachable"},
	} {
		if errors.Is(err, r.err) {
			reason = r.name
			break
		}
	}
	m.failures.WithLabelValues(scheme, reason).Inc()
}
