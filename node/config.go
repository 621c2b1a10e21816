package node

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/ipfs"
	"github.com/jobmesh/jobmesh/jobstore"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/processor"
)

// ErrInvalidConfig is wrapped by every configuration error.
var ErrInvalidConfig = errors.New("node: invalid config")

// Duration is a time.Duration written as text ("10s", "5m") in the config
// file; the [api] section, which package api defines, uses it too.
type Duration = api.Duration

// Config is the repo's config file. Every field is documented in the file
// that `jobnode init` writes (see configTemplate).
type Config struct {
	P2P       P2PConfig       `toml:"p2p"`
	API       api.Config      `toml:"api"`
	Store     StoreConfig     `toml:"store"`
	Processor ProcessorConfig `toml:"processor"`
	Chain     ChainConfig     `toml:"chain"`
	Client    ClientConfig    `toml:"client"`
	Wallet    WalletConfig    `toml:"wallet"`
	Dispatch  DispatchConfig  `toml:"dispatch"`
	Fetch     FetchConfig     `toml:"fetch"`
	IPFS      IPFSConfig      `toml:"ipfs"`
	Log       LogConfig       `toml:"log"`
}

// DefaultConfig returns the defaults written by `jobnode init`.
func DefaultConfig() Config {
	p := p2p.DefaultConfig()
	return Config{
		P2P: P2PConfig{
			Listen:            p.ListenAddrs,
			Announce:          []string{},
			Bootstrap:         []string{},
			DHTMode:           p.DHTMode,
			MDNS:              p.MDNS,
			BootstrapInterval: Duration(p.BootstrapInterval),
			ConnLow:           p.ConnLow,
			ConnHigh:          p.ConnHigh,
			MaxMemoryMiB:      p.MaxMemory >> 20,
			MaxFDs:            p.MaxFileDescriptors,
			MaxMessageSize:    p.MaxMessageSize,
			MeshDegree:        p.MeshDegree,
			DialAllBelow:      DefaultDialAllBelow,
		},
		API: api.DefaultConfig(),
		Store: StoreConfig{Rebroadcast: Duration(15 * time.Second), MaxPayload: 256 << 10, DAGSyncTimeout: Duration(20 * time.Second), RepairInterval: Duration(time.Minute),
			AnnounceWait: Duration(crdt.DefaultConfig().AnnounceWait), JobRetention: Duration(jobstore.DefaultRetention), JobStores: JobStoresAuto},
		Processor: ProcessorConfig{
			CardModel:         "cpu",
			CPUs:              runtime.NumCPU(),
			Models:            []string{},
			AdvertiseEvery:    Duration(10 * time.Minute),
			ProcessTimeout:    Duration(5 * time.Minute),
			MaxMemoryMiBJob:   256,
			BlockTimeout:      Duration(30 * time.Second),
			MaxBlockOutputMiB: 64,
			ModelDir:          DefaultModelDir,
			CompileCacheDir:   DefaultCompileCacheDir,
			MaxModelBytes:     DefaultMaxModelBytes,
			HoldWait:          Duration(processor.DefaultConfig().HoldWait),
			ProgressWindow:    Duration(processor.DefaultConfig().ProgressWindow),
		},
		Client:   ClientConfig{Quiet: Duration(escrow.DefaultTerms().Quiet), MinSigners: escrow.DefaultTerms().MinSigners},
		Dispatch: dispatchSection(dispatch.DefaultConfig(), processor.DefaultConfig().AdvertTTL, processor.DefaultConfig().StakeTTL, processor.DefaultConfig().Probes),
		IPFS:     ipfsSection(ipfs.DefaultConfig()),
		Log:      DefaultLogConfig(),
	}
}

// Validate checks every section.
func (c Config) Validate() error {
	if err := c.p2pConfig(RoleProcessor).Validate(); err != nil {
		return fmt.Errorf("%w: [p2p]: %w", ErrInvalidConfig, err)
	}
	if c.P2P.DialAllBelow < 0 {
		return fmt.Errorf("%w: [p2p] dial_all_below %d must not be negative (0: never dial every advertised processor)", ErrInvalidConfig, c.P2P.DialAllBelow)
	}
	if err := c.API.ValidateSection(); err != nil {
		return fmt.Errorf("%w: [api]: %w", ErrInvalidConfig, err)
	}
	if c.Store.Rebroadcast <= 0 {
		return fmt.Errorf("%w: [store] rebroadcast must be positive", ErrInvalidConfig)
	}
	if c.Store.DAGSyncTimeout <= 0 {
		return fmt.Errorf("%w: [store] dag_sync_timeout must be positive", ErrInvalidConfig)
	}
	if c.Store.AnnounceWait < 0 || c.Store.AnnounceWait > c.Store.DAGSyncTimeout {
		return fmt.Errorf("%w: [store] announce_wait %s outside 0..dag_sync_timeout (%s)", ErrInvalidConfig, time.Duration(c.Store.AnnounceWait), time.Duration(c.Store.DAGSyncTimeout))
	}
	if c.Store.RepairInterval < 0 {
		return fmt.Errorf("%w: [store] repair_interval must not be negative", ErrInvalidConfig)
	}
	if err := c.Store.JobStores.validate(); err != nil {
		return err
	}
	if c.Store.JobRetention < Duration(time.Second) {
		return fmt.Errorf("%w: [store] job_retention %s is below 1s", ErrInvalidConfig, time.Duration(c.Store.JobRetention))
	}
	if c.Store.MaxPayload <= 0 || c.Store.MaxPayload > 1<<20 {
		return fmt.Errorf("%w: [store] max_payload %d outside 1..1048576", ErrInvalidConfig, c.Store.MaxPayload)
	}
	if err := c.Processor.validate(); err != nil {
		return err
	}
	if err := c.Wallet.validate(); err != nil {
		return err
	}
	if err := c.Client.validate(); err != nil {
		return err
	}
	if err := c.Dispatch.config().Validate(); err != nil {
		return fmt.Errorf("%w: [dispatch]: %w", ErrInvalidConfig, err)
	}
	if c.Dispatch.AdvertTTL <= 0 || c.Dispatch.StakeTTL <= 0 {
		return fmt.Errorf("%w: [dispatch] advert_ttl and stake_ttl must be positive", ErrInvalidConfig)
	}
	if err := c.Dispatch.probes().Validate(); err != nil {
		return fmt.Errorf("%w: [dispatch] probe_window, probe_deadline: %w", ErrInvalidConfig, err)
	}
	if err := c.ipfsConfig().Validate(); err != nil {
		return fmt.Errorf("%w: [ipfs]: %w", ErrInvalidConfig, err)
	}
	if err := c.Log.validate(); err != nil {
		return err
	}
	return c.Chain.validate()
}

func isHexAddress(s string) bool {
	if len(s) != 42 || !strings.HasPrefix(s, "0x") {
		return false
	}
	for _, r := range s[2:] {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// LoadConfig reads and validates a config file. Unknown keys are errors, so
// a typo never silently falls back to a default.
func LoadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("node: read config: %w", err)
	}
	cfg := DefaultConfig()
	dec := toml.NewDecoder(bytes.NewReader(b)).DisallowUnknownFields().EnableUnmarshalerInterface()
	if err := dec.Decode(&cfg); err != nil {
		return Config{}, fmt.Errorf("%w: %s: %w", ErrInvalidConfig, path, err)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// Encode renders cfg as a commented TOML file.
func (c Config) Encode() ([]byte, error) {
	var buf bytes.Buffer
	if err := configTemplate.Execute(&buf, c); err != nil {
		return nil, fmt.Errorf("node: render config: %w", err)
	}
	return buf.Bytes(), nil
}
