package custody

import (
	"errors"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	cfg := DefaultConfig()
	if cfg.MaxInlineVerdict != DefaultMaxInlineVerdict {
		t.Fatalf("default %d", cfg.MaxInlineVerdict)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the defaults refused: %v", err)
	}
	cfg.MaxInlineVerdict = 0
	if err := cfg.Validate(); err != nil {
		t.Fatalf("0 (the default) refused: %v", err)
	}
	cfg.MaxInlineVerdict = -1
	if err := cfg.Validate(); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("negative limit: %v", err)
	}
	cfg = DefaultConfig()
	cfg.HoldWait = -1
	if err := cfg.Validate(); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("negative hold wait: %v", err)
	}
}
