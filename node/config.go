package node

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/ipfs"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/processor"
)

// ErrInvalidConfig is wrapped by every configuration error.
var ErrInvalidConfig = errors.New("node: invalid config")

// Duration is a time.Duration written as text ("10s", "5m") in the config
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

// Config is the repo's config file. Every field is documented in the file
// that `jobnode init` writes (see configTemplate).
type Config struct {
	P2P       P2PConfig       `toml:"p2p"`
	API       APIConfig       `toml:"api"`
	Store     StoreConfig     `toml:"store"`
	Processor ProcessorConfig `toml:"processor"`
	Chain     ChainConfig     `toml:"chain"`
	Client    ClientConfig    `toml:"client"`
	Wallet    WalletConfig    `toml:"wallet"`
	Dispatch  DispatchConfig  `toml:"dispatch"`
	Fetch     FetchConfig     `toml:"fetch"`
	IPFS      IPFSConfig      `toml:"ipfs"`
}

// FetchConfig is the [fetch] section: how the node reads job code and
// data by URI.
type FetchConfig struct {
	// AllowPrivateAddresses lets fetches reach loopback, private,
	// link-local and cloud metadata addresses (fetch.Config). Default
	// false; for development meshes on one machine or one LAN only.
	AllowPrivateAddresses bool `toml:"allow_private_addresses"`
}

// IPFSConfig is the [ipfs] section: the block store's quota, garbage
// collection and pin retention (ipfs.Config).
type IPFSConfig struct {
	MaxStorageBytes int64    `toml:"max_storage_bytes"`
	GCInterval      Duration `toml:"gc_interval"`
	GCGrace         Duration `toml:"gc_grace"`
	PinRetention    Duration `toml:"pin_retention"`
	StagingDir      string   `toml:"staging_dir"`
}

// ipfsConfig converts the [ipfs] section.
func (c Config) ipfsConfig() ipfs.Config {
	ic := ipfs.DefaultConfig()
	ic.MaxStorageBytes = c.IPFS.MaxStorageBytes
	ic.GCInterval = time.Duration(c.IPFS.GCInterval)
	ic.GCGrace = time.Duration(c.IPFS.GCGrace)
	ic.PinRetention = time.Duration(c.IPFS.PinRetention)
	ic.StagingDir = c.IPFS.StagingDir
	return ic
}

// P2PConfig is the [p2p] section.
type P2PConfig struct {
	Listen            []string `toml:"listen"`
	Announce          []string `toml:"announce"`
	Bootstrap         []string `toml:"bootstrap"`
	DHTMode           string   `toml:"dht_mode"`
	MDNS              bool     `toml:"mdns"`
	BootstrapInterval Duration `toml:"bootstrap_interval"`
	ConnLow           int      `toml:"conn_low"`
	ConnHigh          int      `toml:"conn_high"`
	MaxMemoryMiB      int64    `toml:"max_memory_mib"`
	MaxFDs            int      `toml:"max_fds"`
	MaxMessageSize    int      `toml:"max_message_size"`
	MeshDegree        int      `toml:"mesh_degree"`
}

// APIConfig is the [api] section. package api turns it into its own
// Config (api.ConfigFrom); the defaults are DefaultConfig's.
type APIConfig struct {
	Address      string `toml:"address"`
	MaxUploadMiB int64  `toml:"max_upload_mib"`
	// AllowedHosts are Host header names accepted besides the loopback
	// ones. Default none.
	AllowedHosts []string `toml:"allowed_hosts"`
	// AllowedOrigins are Origin header values (scheme://host[:port])
	// accepted besides the API's own. Default none.
	AllowedOrigins []string `toml:"allowed_origins"`
	// ReadHeaderTimeout bounds reading a request's headers. Default 10s.
	ReadHeaderTimeout Duration `toml:"read_header_timeout"`
	// ReadTimeout bounds reading a whole request, body included. Default 30s.
	ReadTimeout Duration `toml:"read_timeout"`
	// UploadTimeout replaces ReadTimeout for the body of an authenticated
	// POST /v1/content. Default 10m.
	UploadTimeout Duration `toml:"upload_timeout"`
	// WriteTimeout bounds writing a response; an event stream gets it
	// anew for each write. Default 5m.
	WriteTimeout Duration `toml:"write_timeout"`
	// IdleTimeout closes a keep-alive connection idle this long. Default 60s.
	IdleTimeout Duration `toml:"idle_timeout"`
	// MaxEventStreams caps the open GET /v1/events streams. Default 64.
	MaxEventStreams int `toml:"max_event_streams"`
	// MaxEventStreamsPerClient caps one client's streams. Default 4.
	MaxEventStreamsPerClient int `toml:"max_event_streams_per_client"`
}

// DefaultAPIConfig returns the [api] defaults.
func DefaultAPIConfig() APIConfig {
	return APIConfig{
		Address: "127.0.0.1:0", MaxUploadMiB: 64, AllowedHosts: []string{}, AllowedOrigins: []string{},
		ReadHeaderTimeout: Duration(10 * time.Second), ReadTimeout: Duration(30 * time.Second),
		UploadTimeout: Duration(10 * time.Minute), WriteTimeout: Duration(5 * time.Minute),
		IdleTimeout: Duration(time.Minute), MaxEventStreams: 64, MaxEventStreamsPerClient: 4,
	}
}

// validate checks the [api] section.
func (c APIConfig) validate() error {
	switch {
	case c.Address == "" || !strings.Contains(c.Address, ":"):
		return fmt.Errorf("%w: [api] address %q: want HOST:PORT", ErrInvalidConfig, c.Address)
	case c.MaxUploadMiB < 1 || c.MaxUploadMiB > 1<<16:
		return fmt.Errorf("%w: [api] max_upload_mib %d outside 1..65536", ErrInvalidConfig, c.MaxUploadMiB)
	case c.ReadHeaderTimeout <= 0, c.ReadTimeout <= 0, c.UploadTimeout <= 0, c.WriteTimeout <= 0, c.IdleTimeout <= 0:
		return fmt.Errorf("%w: [api] timeouts must be positive", ErrInvalidConfig)
	case c.MaxEventStreams < 1 || c.MaxEventStreamsPerClient < 1 || c.MaxEventStreamsPerClient > c.MaxEventStreams:
		return fmt.Errorf("%w: [api] want 1 <= max_event_streams_per_client (%d) <= max_event_streams (%d)", ErrInvalidConfig, c.MaxEventStreamsPerClient, c.MaxEventStreams)
	}
	for _, h := range c.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/@ ") {
			return fmt.Errorf("%w: [api] allowed_hosts: %q is not a host name", ErrInvalidConfig, h)
		}
	}
	for _, o := range c.AllowedOrigins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.User != nil || u.RawQuery != "" {
			return fmt.Errorf("%w: [api] allowed_origins: %q is not scheme://host[:port]", ErrInvalidConfig, o)
		}
	}
	return nil
}

// StoreConfig is the [store] section.
type StoreConfig struct {
	Rebroadcast    Duration `toml:"rebroadcast"`
	MaxPayload     int      `toml:"max_payload"`
	DAGSyncTimeout Duration `toml:"dag_sync_timeout"`
	RepairInterval Duration `toml:"repair_interval"`
	AnnounceWait   Duration `toml:"announce_wait"`
}

// ProcessorConfig is the [processor] section: what a processor advertises.
type ProcessorConfig struct {
	CardModel       string   `toml:"card_model"`
	VRAMMiB         uint64   `toml:"vram_mib"`
	CPUs            int      `toml:"cpus"`
	Models          []string `toml:"models"`
	Wallet          string   `toml:"wallet"`
	AdvertiseEvery  Duration `toml:"advertise_every"`
	ProcessTimeout  Duration `toml:"process_timeout"`
	MaxMemoryMiBJob int      `toml:"max_job_memory_mib"`
	// ModelDir is the model store's directory; a relative path is
	// relative to the repo (OpenRepo resolves it). Empty: no model
	// store, so no pre-download. Default "models".
	ModelDir string `toml:"model_dir"`
	// MaxModelBytes bounds the model store. Default 64 GiB.
	MaxModelBytes int64 `toml:"max_model_bytes"`
}

// ClientConfig is the [client] section: the terms this node's jobs are
// created with on the escrow (escrow.Terms), fixed for each job's life.
type ClientConfig struct {
	// Quiet is how long after a job's last join it may first be settled;
	// each join restarts it. Default escrow.DefaultTerms().Quiet (1m).
	Quiet Duration `toml:"quiet"`
	// MinSigners is the fewest member signatures a settlement needs.
	// Default escrow.DefaultTerms().MinSigners (2).
	MinSigners uint8 `toml:"min_signers"`
}

// Terms are the section's escrow terms.
func (c ClientConfig) Terms() escrow.Terms {
	return escrow.Terms{Quiet: time.Duration(c.Quiet), MinSigners: c.MinSigners}
}

func (c ClientConfig) validate() error {
	if err := c.Terms().Validate(); err != nil {
		return fmt.Errorf("%w: [client]: %w", ErrInvalidConfig, err)
	}
	return nil
}

// DefaultModelDir is the model store's directory inside a repo.
const DefaultModelDir = "models"

// DefaultMaxModelBytes is the model store's default byte budget.
const DefaultMaxModelBytes = 64 << 30

// DispatchConfig is the [dispatch] section: the mesh's dispatching,
// pricing and QoS parameters (dispatch.Config). Every node of a mesh must
// use the same values, or their decisions diverge.
type DispatchConfig struct {
	TaskOverhead       Duration `toml:"task_overhead"`
	UnitTime           Duration `toml:"unit_time"`
	QueueAlpha         float64  `toml:"queue_alpha"`
	MinQueueLen        int      `toml:"min_queue_len"`
	MinModelHolders    int      `toml:"min_model_holders"`
	MaxReplicas        int      `toml:"max_replicas"`
	RoundScores        []uint32 `toml:"round_scores"`
	FeeBasePoints      uint32   `toml:"fee_base_points"`
	ScoreWindow        int      `toml:"score_window"`
	NewNodeTaskScore   uint32   `toml:"new_node_task_score"`
	SpeedWeight        uint32   `toml:"speed_weight"`
	VRAMWeight         uint32   `toml:"vram_weight"`
	TimeoutWeight      uint32   `toml:"timeout_weight"`
	MinTimeout         Duration `toml:"min_timeout"`
	KickTimeoutWindow  int      `toml:"kick_timeout_window"`
	KickTimeouts       int      `toml:"kick_timeouts"`
	KickScoreWindow    int      `toml:"kick_score_window"`
	KickScoreThreshold uint32   `toml:"kick_score_threshold"`
	KickLowStreak      int      `toml:"kick_low_streak"`
	// AdvertTTL and StakeTTL are local: how old an advertisement may be
	// for its processor to count as live, and how long a stake read from
	// the escrow is reused.
	AdvertTTL Duration `toml:"advert_ttl"`
	StakeTTL  Duration `toml:"stake_ttl"`
}

func dispatchSection(d dispatch.Config, advertTTL, stakeTTL time.Duration) DispatchConfig {
	return DispatchConfig{
		TaskOverhead: Duration(d.TaskOverhead), UnitTime: Duration(d.UnitTime),
		QueueAlpha: d.QueueAlpha, MinQueueLen: d.MinQueueLen,
		MinModelHolders: d.MinModelHolders, MaxReplicas: d.MaxReplicas,
		RoundScores: slices.Clone(d.RoundScores), FeeBasePoints: d.FeeBasePoints, ScoreWindow: d.ScoreWindow, NewNodeTaskScore: d.NewNodeTaskScore,
		SpeedWeight: d.SpeedWeight, VRAMWeight: d.VRAMWeight, TimeoutWeight: d.TimeoutWeight,
		MinTimeout:        Duration(d.MinTimeout),
		KickTimeoutWindow: d.KickTimeoutWindow, KickTimeouts: d.KickTimeouts,
		KickScoreWindow: d.KickScoreWindow, KickScoreThreshold: d.KickScoreThreshold, KickLowStreak: d.KickLowStreak,
		AdvertTTL: Duration(advertTTL), StakeTTL: Duration(stakeTTL),
	}
}

// config converts the section for the dispatch package.
func (c DispatchConfig) config() dispatch.Config {
	return dispatch.Config{
		TaskOverhead: time.Duration(c.TaskOverhead), UnitTime: time.Duration(c.UnitTime),
		QueueAlpha: c.QueueAlpha, MinQueueLen: c.MinQueueLen,
		MinModelHolders: c.MinModelHolders, MaxReplicas: c.MaxReplicas,
		RoundScores: slices.Clone(c.RoundScores), FeeBasePoints: c.FeeBasePoints, ScoreWindow: c.ScoreWindow, NewNodeTaskScore: c.NewNodeTaskScore,
		SpeedWeight: c.SpeedWeight, VRAMWeight: c.VRAMWeight, TimeoutWeight: c.TimeoutWeight,
		MinTimeout:        time.Duration(c.MinTimeout),
		KickTimeoutWindow: c.KickTimeoutWindow, KickTimeouts: c.KickTimeouts,
		KickScoreWindow: c.KickScoreWindow, KickScoreThreshold: c.KickScoreThreshold, KickLowStreak: c.KickLowStreak,
	}
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
		},
		API: DefaultAPIConfig(),
		Store: StoreConfig{Rebroadcast: Duration(15 * time.Second), MaxPayload: 256 << 10, DAGSyncTimeout: Duration(20 * time.Second), RepairInterval: Duration(time.Minute),
			AnnounceWait: Duration(crdt.DefaultConfig().AnnounceWait)},
		Processor: ProcessorConfig{
			CardModel:       "cpu",
			CPUs:            runtime.NumCPU(),
			Models:          []string{},
			AdvertiseEvery:  Duration(10 * time.Minute),
			ProcessTimeout:  Duration(5 * time.Minute),
			MaxMemoryMiBJob: 256,
			ModelDir:        DefaultModelDir,
			MaxModelBytes:   DefaultMaxModelBytes,
		},
		Client:   ClientConfig{Quiet: Duration(escrow.DefaultTerms().Quiet), MinSigners: escrow.DefaultTerms().MinSigners},
		Dispatch: dispatchSection(dispatch.DefaultConfig(), processor.DefaultConfig().AdvertTTL, processor.DefaultConfig().StakeTTL),
		IPFS:     ipfsSection(ipfs.DefaultConfig()),
	}
}

func ipfsSection(ic ipfs.Config) IPFSConfig {
	return IPFSConfig{MaxStorageBytes: ic.MaxStorageBytes, GCInterval: Duration(ic.GCInterval), GCGrace: Duration(ic.GCGrace),
		PinRetention: Duration(ic.PinRetention), StagingDir: ic.StagingDir}
}

// P2PConfig converts the [p2p] section for the p2p package. The role sets
// what the file does not: bootstrap nodes are DHT servers with peer
// exchange.
func (c Config) p2pConfig(role Role) p2p.Config {
	p := p2p.DefaultConfig()
	p.ListenAddrs = c.P2P.Listen
	p.AnnounceAddrs = c.P2P.Announce
	p.Bootstrap = c.P2P.Bootstrap
	p.DHTMode = c.P2P.DHTMode
	p.MDNS = c.P2P.MDNS
	p.BootstrapInterval = time.Duration(c.P2P.BootstrapInterval)
	if p.BootstrapMaxBackoff < p.BootstrapInterval {
		p.BootstrapMaxBackoff = p.BootstrapInterval
	}
	p.ConnLow, p.ConnHigh = c.P2P.ConnLow, c.P2P.ConnHigh
	p.MaxMemory = c.P2P.MaxMemoryMiB << 20
	p.MaxFileDescriptors = c.P2P.MaxFDs
	p.MaxMessageSize = c.P2P.MaxMessageSize
	p.MeshDegree = c.P2P.MeshDegree
	if role == RoleBootstrap {
		p.DHTMode = p2p.DHTModeServer
		p.PeerExchange = true
	}
	return p
}

// ProcessorConfig converts the [processor] section.
func (c Config) ProcessorConfig() processor.Config {
	pc := processor.DefaultConfig()
	pc.Wallet = c.Processor.Wallet
	pc.CardModel = c.Processor.CardModel
	pc.VRAMMiB = c.Processor.VRAMMiB
	pc.Room.Queue.ProcessingTimeout = time.Duration(c.Processor.ProcessTimeout)
	pc.Wasm.MemoryLimitBytes = uint64(c.Processor.MaxMemoryMiBJob) << 20
	pc.Dispatch = c.Dispatch.config()
	pc.AdvertTTL = time.Duration(c.Dispatch.AdvertTTL)
	pc.StakeTTL = time.Duration(c.Dispatch.StakeTTL)
	pc.Fetch.AllowPrivateAddresses = c.Fetch.AllowPrivateAddresses
	return pc
}

// Validate checks every section.
func (c Config) Validate() error {
	if err := c.p2pConfig(RoleProcessor).Validate(); err != nil {
		return fmt.Errorf("%w: [p2p]: %w", ErrInvalidConfig, err)
	}
	if err := c.API.validate(); err != nil {
		return err
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
	if c.Store.MaxPayload <= 0 || c.Store.MaxPayload > 1<<20 {
		return fmt.Errorf("%w: [store] max_payload %d outside 1..1048576", ErrInvalidConfig, c.Store.MaxPayload)
	}
	p := c.Processor
	switch {
	case p.CardModel == "":
		return fmt.Errorf("%w: [processor] card_model is empty", ErrInvalidConfig)
	case p.CPUs <= 0:
		return fmt.Errorf("%w: [processor] cpus must be positive", ErrInvalidConfig)
	case p.Wallet != "" && !isHexAddress(p.Wallet):
		return fmt.Errorf("%w: [processor] wallet %q is not a 0x-prefixed 20-byte hex address", ErrInvalidConfig, p.Wallet)
	case p.AdvertiseEvery < Duration(time.Second):
		return fmt.Errorf("%w: [processor] advertise_every must be at least 1s", ErrInvalidConfig)
	case p.ProcessTimeout <= 0:
		return fmt.Errorf("%w: [processor] process_timeout must be positive", ErrInvalidConfig)
	case p.MaxMemoryMiBJob <= 0 || p.MaxMemoryMiBJob > 4096:
		return fmt.Errorf("%w: [processor] max_job_memory_mib %d outside 1..4096", ErrInvalidConfig, p.MaxMemoryMiBJob)
	case p.MaxModelBytes <= 0:
		return fmt.Errorf("%w: [processor] max_model_bytes must be positive", ErrInvalidConfig)
	case len(p.Models) > maxAdvertModels:
		return fmt.Errorf("%w: [processor] models lists %d models, at most %d", ErrInvalidConfig, len(p.Models), maxAdvertModels)
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
	if err := c.ipfsConfig().Validate(); err != nil {
		return fmt.Errorf("%w: [ipfs]: %w", ErrInvalidConfig, err)
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
	dec := toml.NewDecoder(bytes.NewReader(b)).DisallowUnknownFields()
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

func tomlValue(v any) (string, error) {
	b, err := toml.Marshal(map[string]any{"v": v})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(strings.TrimPrefix(string(b), "v = ")), nil
}

var configTemplate = template.Must(template.New("config").Funcs(template.FuncMap{"toml": tomlValue}).Parse(
	`# jobmesh node configuration, written by 'jobnode init'.
# Every value below is the default unless you changed it. Durations are
# written like "10s", "5m". Unknown keys are refused at start-up.

[p2p]
# Multiaddrs to listen on (TCP and QUIC).
listen = {{toml .P2P.Listen}}
# Addresses to advertise instead of the listen addresses (behind NAT or a
# port forward). Empty: advertise the listen addresses.
announce = {{toml .P2P.Announce}}
# Full multiaddrs (ending in /p2p/<peer id>) of bootstrap peers to keep
# connected to; 'jobnode id' on a bootstrap node prints them.
bootstrap = {{toml .P2P.Bootstrap}}
# Kademlia DHT mode: "server", "client" or "auto". Bootstrap nodes always
# run as servers. The DHT runs under the private /jobmesh prefix and never
# joins the public IPFS DHT.
dht_mode = {{toml .P2P.DHTMode}}
# Find peers on the local network with mDNS.
mdns = {{toml .P2P.MDNS}}
# How often bootstrap connections are checked and redialled (unreachable
# peers back off exponentially up to 5m).
bootstrap_interval = {{toml .P2P.BootstrapInterval}}
# Connection manager watermarks: trim to conn_low when over conn_high.
conn_low = {{toml .P2P.ConnLow}}
conn_high = {{toml .P2P.ConnHigh}}
# Resource manager limits for libp2p.
max_memory_mib = {{toml .P2P.MaxMemoryMiB}}
max_fds = {{toml .P2P.MaxFDs}}
# Largest pubsub message accepted, in bytes.
max_message_size = {{toml .P2P.MaxMessageSize}}
# Gossipsub mesh degree: how many peers of a topic this node forwards
# others' messages to (2 to 12). A node's own messages go to every
# connected peer of the topic anyway, so a larger mesh mostly adds
# duplicates.
mesh_degree = {{toml .P2P.MeshDegree}}

[api]
# Local HTTP API (and Prometheus /metrics). Port 0 picks a free port; the
# address in use is written to the repo's 'api' file while the node runs.
# Requests that change anything need the bearer token in the repo's
# api.token file (the CLI and the SDK read it); reads are open to loopback
# clients only. api/openapi.yaml (x-jobmesh-access) lists which is which.
address = {{toml .API.Address}}
# Largest body POST /v1/content accepts, in MiB; larger uploads get 413.
max_upload_mib = {{toml .API.MaxUploadMiB}}
# Host header names accepted besides localhost and loopback addresses (a
# name other than these is refused, which defeats DNS rebinding). Name the
# host or address clients use when the API listens beyond loopback.
allowed_hosts = {{toml .API.AllowedHosts}}
# Origins (scheme://host[:port]) whose pages may call the API besides the
# API's own; any other Origin is refused.
allowed_origins = {{toml .API.AllowedOrigins}}
# Time to read a request's headers; to read a whole request (body
# included); to read an authenticated upload's body; to write a response
# (an event stream gets it anew for each write); and to keep an idle
# keep-alive connection open.
read_header_timeout = {{toml .API.ReadHeaderTimeout}}
read_timeout = {{toml .API.ReadTimeout}}
upload_timeout = {{toml .API.UploadTimeout}}
write_timeout = {{toml .API.WriteTimeout}}
idle_timeout = {{toml .API.IdleTimeout}}
# Open GET /v1/events streams: at most max_event_streams in all, at most
# max_event_streams_per_client for one client (a token, a dashboard
# session, or a remote address for the anonymous), and at most half of
# max_event_streams for anonymous clients together. More get 429.
max_event_streams = {{toml .API.MaxEventStreams}}
max_event_streams_per_client = {{toml .API.MaxEventStreamsPerClient}}

[store]
# How often the replicated store re-announces its heads, so that peers that
# missed an update catch up.
rebroadcast = {{toml .Store.Rebroadcast}}
# Largest record payload accepted, in bytes (at most 1 MiB).
max_payload = {{toml .Store.MaxPayload}}
# How long fetching one update of the store from peers may take. An update
# whose author went offline before anyone fetched it is given up after this
# (and retried by the periodic repair), so it must stay short: while it
# waits, later updates wait too.
dag_sync_timeout = {{toml .Store.DAGSyncTimeout}}
# How often the store checks whether an update was given up (a fetch that
# timed out, an update whose parts did not all arrive) and, if so, walks its
# history again to apply what is missing. Until then those records are
# missing on this node. 0 turns the repair off.
repair_interval = {{toml .Store.RepairInterval}}
# How long applying an update waits for a part it needs to arrive with a
# peer's announcement before asking peers for it (0: ask at once).
announce_wait = {{toml .Store.AnnounceWait}}

[processor]
# What this node advertises when it runs as a processor.
# Card model ("cpu" when there is no GPU) and its memory in MiB.
card_model = {{toml .Processor.CardModel}}
vram_mib = {{toml .Processor.VRAMMiB}}
# CPU cores offered to jobs.
cpus = {{toml .Processor.CPUs}}
# CIDs of the models this node keeps on disk.
models = {{toml .Processor.Models}}
# EVM address that receives payouts (0x...). 'jobnode init' creates a
# wallet key (wallet.key in the repo) and writes its address here unless
# --wallet names another; 'jobnode wallet new' and 'jobnode wallet import'
# rewrite it. It must be the address of the [wallet] key.
wallet = {{toml .Processor.Wallet}}
# How often the advertisement is refreshed in the replicated store.
advertise_every = {{toml .Processor.AdvertiseEvery}}
# How long a locked MicroJob may take before others may take it again.
process_timeout = {{toml .Processor.ProcessTimeout}}
# Memory cap of one WebAssembly MicroJob, in MiB.
max_job_memory_mib = {{toml .Processor.MaxMemoryMiBJob}}
# Model store: one file per model, named by its CID. Models found there at
# start are advertised with the ones listed in 'models', and models this
# node is asked to pre-download (a job needs them and too few processors
# hold them) are fetched into it. A relative path is inside the repo;
# empty: no store, no pre-download.
model_dir = {{toml .Processor.ModelDir}}
# Most bytes of models the store holds; a model that does not fit is not
# fetched (the error says so).
max_model_bytes = {{toml .Processor.MaxModelBytes}}

[chain]
# JSON-RPC endpoint (http(s)://, ws(s)://) of the chain the escrow contract
# is on. Empty: no chain; processors then write verdicts but settle nothing,
# and clients submit jobs without escrow. With a chain, processors work only
# on jobs whose escrow is funded, sign settlements and submit them, paying
# gas from the [wallet] key. The --eth-rpc flag overrides it.
rpc = {{toml .Chain.RPC}}
# Address of the escrow contract (0x...). Empty with an rpc: the rpc must
# be a 'jobnode bootstrap --devchain' chain, which tells its escrow's
# address (jobmesh_escrow). The --escrow flag overrides it.
contract = {{toml .Chain.Contract}}
# Chain ID the endpoint must report; 0: whatever it reports.
chain_id = {{toml .Chain.ChainID}}

[client]
# The terms this node creates its jobs' escrows with, fixed for each job's
# life (the contract enforces them).
# How long after the last processor joins a job it may first be settled;
# each join restarts it. Honest processors join as they start work, within
# seconds of the job's announcement, so an account that joins first cannot
# settle before they are members. Rounded up to whole seconds; a job's
# deadline must leave it. Longer delays payment; shorter lets a fast attacker settle
# before slow honest processors have joined.
quiet = {{toml .Client.Quiet}}
# The fewest member signatures a settlement needs, whatever share of the
# members they are (the contract also wants its quorum share of them):
# with 2, a lone staked account that is a job's only member cannot settle
# it. At least 1; 1 suits only a mesh of one processor.
min_signers = {{toml .Client.MinSigners}}

[wallet]
# Where the wallet key is: the key that receives payouts, pays gas, funds
# jobs and signs settlements. Empty (the default, what 'jobnode init'
# writes): the raw hex key wallet.key in the repo, unencrypted, for
# development. Otherwise a go-ethereum keystore file (absolute, or relative
# to the repo; 'jobnode wallet new --keystore' writes wallet.json), whose
# passphrase is read from the file named by --password-file or from the
# JOBMESH_WALLET_PASSWORD environment variable.
keystore = {{toml .Wallet.Keystore}}

[dispatch]
# Who gets which work, in what order, and how processors are scored. Every
# node of a mesh must use the same values (except advert_ttl and stake_ttl),
# or their decisions diverge. Sources of the defaults: docs/PROTOCOL.md.
# A job's estimated time is task_overhead + unit_time x its task size (or
# its block count); its task value, which orders the queue, is its price
# over that time.
task_overhead = {{toml .Dispatch.TaskOverhead}}
unit_time = {{toml .Dispatch.UnitTime}}
# The open-job queue is capped at max(queue_alpha x live processors,
# min_queue_len); beyond it the lowest-value job is aborted.
queue_alpha = {{toml .Dispatch.QueueAlpha}}
min_queue_len = {{toml .Dispatch.MinQueueLen}}
# Live processors that should hold each required model (fewer: others are
# asked to pre-download it).
min_model_holders = {{toml .Dispatch.MinModelHolders}}
# Most processors of one card model a job may ask for (requirements.replicas);
# this processor does not take a job that asks for more.
max_replicas = {{toml .Dispatch.MaxReplicas}}
# Points for the 1st, 2nd, 3rd... submission in a commitment or disclosure
# round; a node's speed score is the mean task score over score_window tasks,
# new_node_task_score before its first.
round_scores = {{toml .Dispatch.RoundScores}}
score_window = {{toml .Dispatch.ScoreWindow}}
new_node_task_score = {{toml .Dispatch.NewNodeTaskScore}}
# Fee weight of a credited result: fee_base_points plus its processor's
# task score (round scores of its commitment and disclosure positions).
fee_base_points = {{toml .Dispatch.FeeBasePoints}}
# QoS Q = (speed x B + vram x R + timeout x P) / (speed + vram + timeout).
speed_weight = {{toml .Dispatch.SpeedWeight}}
vram_weight = {{toml .Dispatch.VRAMWeight}}
timeout_weight = {{toml .Dispatch.TimeoutWeight}}
# Shortest timeout setting the timeout score counts.
min_timeout = {{toml .Dispatch.MinTimeout}}
# Kick-out: kick_timeouts timeouts in the last kick_timeout_window tasks, or
# a mean task score over kick_score_window tasks below kick_score_threshold
# for kick_low_streak tasks in a row.
kick_timeout_window = {{toml .Dispatch.KickTimeoutWindow}}
kick_timeouts = {{toml .Dispatch.KickTimeouts}}
kick_score_window = {{toml .Dispatch.KickScoreWindow}}
kick_score_threshold = {{toml .Dispatch.KickScoreThreshold}}
kick_low_streak = {{toml .Dispatch.KickLowStreak}}
# A processor counts as live while its advertisement is younger than this
# (keep it above [processor] advertise_every).
advert_ttl = {{toml .Dispatch.AdvertTTL}}
# How long a stake read from the escrow contract is reused.
stake_ttl = {{toml .Dispatch.StakeTTL}}

[fetch]
# Let job code and data URIs (https://, wss://, sftp://...) reach loopback,
# private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local, CGNAT and
# cloud metadata addresses. Off, such destinations are refused, checked on
# the address actually dialled: a job from the network must not use this
# node to reach its own network. Turn it on only for a development mesh
# whose sources run on this machine or LAN.
allow_private_addresses = {{toml .Fetch.AllowPrivateAddresses}}

[ipfs]
# Most bytes of blocks the block store should hold: past it, a garbage
# collection deletes every block that no pin keeps (0: no quota). Pinned
# content (uploads for pin_retention, running jobs' results and inputs,
# the outputs of this node's jobs) stays even over it.
max_storage_bytes = {{toml .IPFS.MaxStorageBytes}}
# How often the garbage collection also runs on its own (0: only over the
# quota).
gc_interval = {{toml .IPFS.GCInterval}}
# Blocks written less than this long ago are never collected: content being
# fetched or produced and not pinned yet.
gc_grace = {{toml .IPFS.GCGrace}}
# How long content stays pinned after it is no longer needed: uploads from
# their upload, a job's results and inputs from its settlement.
pin_retention = {{toml .IPFS.PinRetention}}
# Absolute directory where uploads are spooled before they are imported;
# empty: a temporary directory. Leftovers are removed at start.
staging_dir = {{toml .IPFS.StagingDir}}
`))
