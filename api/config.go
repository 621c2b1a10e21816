package api

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/node"
)

// ErrInvalidConfig is wrapped by Config.Validate errors.
var ErrInvalidConfig = errors.New("api: invalid config")

// MinTokenLen is the shortest bearer token New accepts.
const MinTokenLen = 32

// Config configures the API's handler (New) and server (Listen).
type Config struct {
	// Token is the bearer token that requests changing state carry
	// (Authorization: Bearer <token>). Required, at least MinTokenLen
	// characters; the daemon reads it from the repo's api.token.
	Token string
	// AllowedHosts are Host header names accepted besides localhost and
	// loopback addresses, compared without the port. Default none.
	AllowedHosts []string
	// AllowedOrigins are Origin values accepted besides the API's own
	// (scheme://host[:port] of the request). Default none.
	AllowedOrigins []string
	// ReadHeaderTimeout bounds reading a request's headers. Default 10s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included. Default 30s.
	ReadTimeout time.Duration
	// UploadTimeout replaces ReadTimeout for the body of an authenticated
	// POST /v1/content. Default 10m.
	UploadTimeout time.Duration
	// WriteTimeout bounds writing a response; an event stream gets it
	// anew before each write, so an open stream is not cut but a client
	// that stops reading is. Default 5m.
	WriteTimeout time.Duration
	// IdleTimeout closes keep-alive connections idle this long. Default 60s.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers. Default 64 KiB.
	MaxHeaderBytes int
	// Events configures GET /v1/events, its stream limits included.
	Events EventsConfig
	// LoginTTL is how long a one-time login code stays usable. Default 1h.
	LoginTTL time.Duration
	// SessionTTL is how long a dashboard session lasts. Default 12h.
	SessionTTL time.Duration
	// MaxSessions caps the live dashboard sessions (and unused login
	// codes); the oldest goes first. Default 16.
	MaxSessions int
	// Now is the clock; nil: time.Now. Tests inject one.
	Now func() time.Time
}

// DefaultConfig returns the defaults documented on Config, without a token.
func DefaultConfig() Config {
	return ConfigFrom(node.DefaultAPIConfig())
}

// ConfigFrom converts a node's [api] section; the token is left empty.
func ConfigFrom(c node.APIConfig) Config {
	ev := DefaultEventsConfig()
	ev.MaxStreams = c.MaxEventStreams
	ev.MaxStreamsPerClient = c.MaxEventStreamsPerClient
	ev.MaxAnonymousStreams = c.MaxEventStreams / 2
	return Config{
		AllowedHosts:      append([]string(nil), c.AllowedHosts...),
		AllowedOrigins:    append([]string(nil), c.AllowedOrigins...),
		ReadHeaderTimeout: time.Duration(c.ReadHeaderTimeout),
		ReadTimeout:       time.Duration(c.ReadTimeout),
		UploadTimeout:     time.Duration(c.UploadTimeout),
		WriteTimeout:      time.Duration(c.WriteTimeout),
		IdleTimeout:       time.Duration(c.IdleTimeout),
		MaxHeaderBytes:    64 << 10,
		Events:            ev,
		LoginTTL:          time.Hour,
		SessionTTL:        12 * time.Hour,
		MaxSessions:       16,
	}
}

// Validate checks the config, the token included.
func (c Config) Validate() error {
	switch {
	case len(c.Token) < MinTokenLen:
		return fmt.Errorf("%w: a token of at least %d characters is required", ErrInvalidConfig, MinTokenLen)
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
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%w: allowed origin %q is not scheme://host[:port]", ErrInvalidConfig, o)
		}
	}
	return c.Events.Validate()
}

func (c Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}
