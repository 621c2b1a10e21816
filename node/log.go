package node

import (
	"fmt"
	"io"
	"log/slog"
)

// Log formats accepted in [log] format and by --log-format.
const (
	LogFormatText = "text"
	LogFormatJSON = "json"
)

// LogConfig is the [log] section: how the node writes its log on stderr.
// The --log-level and --log-format flags override it.
type LogConfig struct {
	// Level is the lowest level written: debug, info, warn or error.
	Level string `toml:"level"`
	// Format is text (logfmt, key=value) or json (one object a line).
	Format string `toml:"format"`
}

// DefaultLogConfig returns the defaults: info, text.
func DefaultLogConfig() LogConfig {
	return LogConfig{Level: "info", Format: LogFormatText}
}

// ParseLogLevel reads a level name: debug, info, warn or error.
func ParseLogLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return l, fmt.Errorf("level %q is not debug, info, warn or error", s)
	}
	return l, nil
}

func (c LogConfig) validate() error {
	if _, err := ParseLogLevel(c.Level); err != nil {
		return fmt.Errorf("%w: [log] %w", ErrInvalidConfig, err)
	}
	if c.Format != LogFormatText && c.Format != LogFormatJSON {
		return fmt.Errorf("%w: [log] format %q is not text or json", ErrInvalidConfig, c.Format)
	}
	return nil
}

// Handler returns a slog handler writing to w as c says; c must be valid.
func (c LogConfig) Handler(w io.Writer) slog.Handler {
	level, _ := ParseLogLevel(c.Level)
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == LogFormatJSON {
		return slog.NewJSONHandler(w, opts)
	}
	return slog.NewTextHandler(w, opts)
}
