package processor

import (
	"errors"
	"testing"
)

func TestMaxInlineVerdictConfig(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Wallet = "0x00000000000000000000000000000000000000a1"
	if cfg.MaxInlineVerdict != DefaultMaxInlineVerdict {
		t.Fatalf("default %d", cfg.MaxInlineVerdict)
	}
	cfg.MaxInlineVerdict = 0
	if err := cfg.Validate(); err != nil {
		t.Fatalf("0 (the default) refused: %v", err)
	}
	cfg.MaxInlineVerdict = -1
	if err := cfg.Validate(); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("negative limit: %v", err)
	}
}
