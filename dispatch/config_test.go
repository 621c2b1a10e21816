package dispatch

import (
	"errors"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	for name, mut := range map[string]func(*Config){
		"negative overhead":    func(c *Config) { c.TaskOverhead = -1 },
		"zero time":            func(c *Config) { c.TaskOverhead, c.UnitTime = 0, 0 },
		"nan alpha":            func(c *Config) { c.QueueAlpha = 0 / func() float64 { return 0 }() },
		"no min queue":         func(c *Config) { c.MinQueueLen = 0 },
		"replicas":             func(c *Config) { c.MaxReplicas = 0 },
		"increasing scores":    func(c *Config) { c.RoundScores = []uint32{1, 2} },
		"no round scores":      func(c *Config) { c.RoundScores = nil },
		"kick timeouts":        func(c *Config) { c.KickTimeouts = 4 },
		"zero qos weights":     func(c *Config) { c.SpeedWeight, c.VRAMWeight, c.TimeoutWeight = 0, 0, 0 },
		"zero score window":    func(c *Config) { c.ScoreWindow = 0 },
		"zero low streak":      func(c *Config) { c.KickLowStreak = 0 },
		"negative min timeout": func(c *Config) { c.MinTimeout = -1 },
		"no fail reports":      func(c *Config) { c.FailReports = 0 },
	} {
		cfg := DefaultConfig()
		mut(&cfg)
		if err := cfg.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: got %v", name, err)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestNewRejectsBadConfig: the queue and the pool the mesh builds refuse
// a config that fails Validate, the zero config included.
func TestNewRejectsBadConfig(t *testing.T) {
	bad := DefaultConfig()
	bad.QueueAlpha = 0
	for _, cfg := range []Config{bad, {}} {
		if _, err := NewQueue(cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("NewQueue: got %v", err)
		}
		if _, err := NewPool(cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("NewPool: got %v", err)
		}
	}
}
