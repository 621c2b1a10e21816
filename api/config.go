package api

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// ErrInvalidConfig is wrapped by Config.Validate errors.
var ErrInvalidConfig = errors.New("api: invalid config")

// MinTokenLen is the shortest bearer token New accepts.
const MinTokenLen = 32

// Config configures the API's handler (New) and server (Listen). The
// fields with a toml key are the [api] section of a node's config file;
// the others are set in code (a daemon reads the token from the repo's
// api.token) and keep their defaults there.
type Config struct {
	// Address is where a daemon's server listens, HOST:PORT; port 0
	// picks a free port. Default 127.0.0.1:0.
	Address string `toml:"address"`
	// MaxUploadMiB bounds the body of POST /v1/content, in MiB, 1 to
	// 65536. Default 64.
	MaxUploadMiB int64 `toml:"max_upload_mib"`
	// AllowedHosts are Host header names accepted besides localhost and
	// loopback addresses, compared without the port. Default none.
	AllowedHosts []string `toml:"allowed_hosts"`
	// AllowedOrigins are Origin values (scheme://host[:port]) accepted
	// besides the API's own. Default none.
	AllowedOrigins []string `toml:"allowed_origins"`
	// ReadHeaderTimeout bounds reading a request's headers. Default 10s.
	ReadHeaderTimeout Duration `toml:"read_header_timeout"`
	// ReadTimeout bounds reading a whole request, body included. Default 30s.
	ReadTimeout Duration `toml:"read_timeout"`
	// UploadTimeout replaces ReadTimeout for the body of an authenticated
	// POST /v1/content. Default 10m.
	UploadTimeout Duration `toml:"upload_timeout"`
	// WriteTimeout bounds writing a response; an event stream gets it
	// anew before each write, so an open stream is not cut but a client
	// that stops reading is. Default 5m.
	WriteTimeout Duration `toml:"write_timeout"`
	// IdleTimeout closes keep-alive connections idle this long. Default 60s.
	IdleTimeout Duration `toml:"idle_timeout"`
	// MaxEventStreams caps the open GET /v1/events streams; clients
	// without credentials get half of them together. Default 64.
	MaxEventStreams int `toml:"max_event_streams"`
	// MaxEventStreamsPerClient caps one client's streams. Default 4.
	MaxEventStreamsPerClient int `toml:"max_event_streams_per_client"`

	// Token is the bearer token that requests changing state carry
	// (Authorization: Bearer <token>). Required, at least MinTokenLen
	// characters.
	Token string `toml:"-"`
	// MaxHeaderBytes bounds a request's headers. Default 64 KiB.
	MaxHeaderBytes int `toml:"-"`
	// Events tunes GET /v1/events; New replaces its stream caps and write
	// timeout with MaxEventStreams, MaxEventStreamsPerClient, half of
	// MaxEventStreams for anonymous clients, and WriteTimeout.
	Events EventsConfig `toml:"-"`
	// LoginTTL is how long a one-time login code stays usable. Default 1h.
	LoginTTL time.Duration `toml:"-"`
	// SessionTTL is how long a dashboard session lasts. Default 12h.
	SessionTTL time.Duration `toml:"-"`
	// MaxSessions caps the live dashboard sessions (and unused login
	// codes); the oldest goes first. Default 16.
	MaxSessions int `toml:"-"`
	// Now is the clock; nil: time.Now. Tests inject one.
	Now func() time.Time `toml:"-"`
}

// Duration is a time.Duration written as text ("10s", "5m") in a config
// file.
type Duration time.Duration

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// DefaultConfig returns the defaults documented on Config, without a token.
func DefaultConfig() Config {
	return Config{
		Address: "127.0.0.1:0", MaxUploadMiB: 64, AllowedHosts: []string{}, AllowedOrigins: []string{},
		ReadHeaderTimeout: Duration(10 * time.Second), ReadTimeout: Duration(30 * time.Second),
		UploadTimeout: Duration(10 * time.Minute), WriteTimeout: Duration(5 * time.Minute),
		IdleTimeout: Duration(time.Minute), MaxEventStreams: 64, MaxEventStreamsPerClient: 4,
		MaxHeaderBytes: 64 << 10,
		Events:         DefaultEventsConfig(),
		LoginTTL:       time.Hour,
		SessionTTL:     12 * time.Hour,
		MaxSessions:    16,
	}
}

// Validate checks the config, the token included.
func (c Config) Validate() error {
	if len(c.Token) < MinTokenLen {
		return fmt.Errorf("%w: a token of at least %d characters is required", ErrInvalidConfig, MinTokenLen)
	}
	return c.ValidateSection()
}

// ValidateSection checks everything but the token: what a node's config
// file holds, whose token lives in the repo apart from it.
func (c Config) ValidateSection() error {
	switch {
	case c.Address == "" || !strings.Contains(c.Address, ":"):
		return fmt.Errorf("%w: address %q: want HOST:PORT", ErrInvalidConfig, c.Address)
	case c.MaxUploadMiB < 1 || c.MaxUploadMiB > 1<<16:
		return fmt.Errorf("%w: max upload %d MiB outside 1..65536", ErrInvalidConfig, c.MaxUploadMiB)
	case c.ReadHeaderTimeout <= 0, c.ReadTimeout <= 0, c.UploadTimeout <= 0, c.WriteTimeout <= 0, c.IdleTimeout <= 0:
		return fmt.Errorf("%w: timeouts must be positive", ErrInvalidConfig)
	case c.MaxHeaderBytes < 4<<10:
		return fmt.Errorf("%w: max header bytes %d < 4096", ErrInvalidConfig, c.MaxHeaderBytes)
	case c.LoginTTL <= 0, c.SessionTTL <= 0:
		return fmt.Errorf("%w: login and session lifetimes must be positive", ErrInvalidConfig)
	case c.MaxSessions < 1:
		return fmt.Errorf("%w: max sessions %d < 1", ErrInvalidConfig, c.MaxSessions)
	}
	for _, h := range c.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/@ ") {
			return fmt.Errorf("%w: allowed host %q is not a host name", ErrInvalidConfig, h)
		}
	}
	for _, o := range c.AllowedOrigins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.User != nil || u.RawQuery != "" {
			return fmt.Errorf("%w: allowed origin %q is not scheme://host[:port]", ErrInvalidConfig, o)
		}
	}
	if err := c.events().Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return nil
}

// events is the events config New serves GET /v1/events with.
func (c Config) events() EventsConfig {
	ev := c.Events
	ev.MaxStreams = c.MaxEventStreams
	ev.MaxStreamsPerClient = c.MaxEventStreamsPerClient
	ev.MaxAnonymousStreams = c.MaxEventStreams / 2
	ev.WriteTimeout = time.Duration(c.WriteTimeout)
	return ev
}

func (c Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}
