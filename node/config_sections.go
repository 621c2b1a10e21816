package node

import (
	"fmt"
	"slices"
	"time"

	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/ipfs"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/probe"
	"github.com/jobmesh/jobmesh/processor"
)

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
	// DialAllBelow: while the store advertises at most this many
	// processors, a node dials every one of them (keepMeshed); above it,
	// none. 0: never.
	DialAllBelow int `toml:"dial_all_below"`
}

// StoreConfig is the [store] section.
type StoreConfig struct {
	Rebroadcast    Duration `toml:"rebroadcast"`
	MaxPayload     int      `toml:"max_payload"`
	DAGSyncTimeout Duration `toml:"dag_sync_timeout"`
	RepairInterval Duration `toml:"repair_interval"`
	AnnounceWait   Duration `toml:"announce_wait"`
	// JobStores gives each job a replicated store of its own, held by the
	// nodes that take part in it, beside the mesh's store of adverts, job
	// announcements and outcomes: "on", "off" (one store holds every
	// record) or "auto" (on where the node has a chain). Default "auto".
	JobStores JobStoresMode `toml:"job_stores"`
	// RoomStores, with job stores, keeps each MacroJob's took records,
	// commitments and disclosures in a store of its own, which only the
	// MacroJob's members and its verifier's runner hold; the rest of the
	// job's nodes receive them in the MacroJob's aggregates. Every node of
	// a mesh must set it alike. Default false.
	RoomStores bool `toml:"room_stores"`
	// JobRetention is how long a job's store is kept once the job is over
	// (settled, refunded, aborted or past its deadline): the evidence an
	// auditor reads. Default 24h.
	JobRetention Duration `toml:"job_retention"`
}

// JobStoresMode says whether a node keeps a store per job.
type JobStoresMode string

// The values of [store] job_stores.
const (
	JobStoresAuto JobStoresMode = "auto"
	JobStoresOn   JobStoresMode = "on"
	JobStoresOff  JobStoresMode = "off"
)

// On reports whether a node keeps job stores: "auto" turns them on where
// the node has a chain, whose releases are what a node outside a job
// checks the job's outcome summary against once its store is gone.
func (m JobStoresMode) On(chain bool) bool {
	return m == JobStoresOn || (m == JobStoresAuto && chain)
}

// UnmarshalTOML reads "auto", "on" or "off", and the bool of a config
// written before the modes: true is "on"; false, which was the default
// every such config spelled out, is "auto".
func (m *JobStoresMode) UnmarshalTOML(v *unstable.Node) error {
	switch v.Kind {
	case unstable.String:
		*m = JobStoresMode(v.Data)
	case unstable.Bool:
		*m = JobStoresAuto
		if string(v.Data) == "true" {
			*m = JobStoresOn
		}
	default:
		return fmt.Errorf("%w: [store] job_stores must be \"auto\", \"on\" or \"off\"", ErrInvalidConfig)
	}
	return nil
}

func (m JobStoresMode) validate() error {
	switch m {
	case JobStoresAuto, JobStoresOn, JobStoresOff:
		return nil
	}
	return fmt.Errorf("%w: [store] job_stores %q is not \"auto\", \"on\" or \"off\"", ErrInvalidConfig, string(m))
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
	// BlockTimeout caps the time one block's run may take (the sandbox's
	// wasm.Config.Timeout); a job may ask for less. Default 30s.
	BlockTimeout Duration `toml:"block_timeout"`
	// MaxBlockOutputMiB caps what one block's run may write to stdout
	// (wasm.Config.MaxOutputBytes); a job may ask for less. Default 64.
	MaxBlockOutputMiB int `toml:"max_block_output_mib"`
	// ModelDir is the model store's directory; a relative path is
	// relative to the repo (OpenRepo resolves it). Empty: no model
	// store, so no pre-download. Default "models".
	ModelDir string `toml:"model_dir"`
	// CompileCacheDir is where the WebAssembly executor keeps the native
	// code it compiled, so that a restarted processor does not compile
	// every job's code again (wasm.Config.CacheDir); a relative path is
	// relative to the repo (OpenRepo resolves it). Empty: compiled code
	// is kept in memory only. Default "wasm-cache".
	CompileCacheDir string `toml:"compile_cache_dir"`
	// MaxModelBytes bounds the model store. Default 64 GiB.
	MaxModelBytes int64 `toml:"max_model_bytes"`
	// HoldWait is how long a job's finalizer waits for a second node to
	// hold the job's output before it writes the verdict
	// (processor.Config.HoldWait); 0: it does not wait. Default 30s.
	HoldWait Duration `toml:"hold_wait"`
	// ProgressWindow is how often, at most, the processor says on a job's
	// channel what it committed, and answers the channel's requests for
	// rooms (processor.Config.ProgressWindow); 0: at every turn and
	// request. Default 1s.
	ProgressWindow Duration `toml:"progress_window"`
}

// validate checks the [processor] section.
func (p ProcessorConfig) validate() error {
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
	case p.HoldWait < 0:
		return fmt.Errorf("%w: [processor] hold_wait must not be negative", ErrInvalidConfig)
	case p.ProgressWindow < 0 || time.Duration(p.ProgressWindow) > processor.DefaultConfig().DiscloseGrace:
		return fmt.Errorf("%w: [processor] progress_window %s outside 0..%s (the disclose grace)", ErrInvalidConfig,
			time.Duration(p.ProgressWindow), processor.DefaultConfig().DiscloseGrace)
	case p.MaxMemoryMiBJob <= 0 || p.MaxMemoryMiBJob > 4096:
		return fmt.Errorf("%w: [processor] max_job_memory_mib %d outside 1..4096", ErrInvalidConfig, p.MaxMemoryMiBJob)
	case p.BlockTimeout < Duration(time.Second) || p.BlockTimeout > Duration(time.Hour):
		return fmt.Errorf("%w: [processor] block_timeout %s outside 1s..1h", ErrInvalidConfig, time.Duration(p.BlockTimeout))
	case p.MaxBlockOutputMiB <= 0 || p.MaxBlockOutputMiB > 4096:
		return fmt.Errorf("%w: [processor] max_block_output_mib %d outside 1..4096", ErrInvalidConfig, p.MaxBlockOutputMiB)
	case p.MaxModelBytes <= 0:
		return fmt.Errorf("%w: [processor] max_model_bytes must be positive", ErrInvalidConfig)
	case len(p.Models) > maxAdvertModels:
		return fmt.Errorf("%w: [processor] models lists %d models, at most %d", ErrInvalidConfig, len(p.Models), maxAdvertModels)
	}
	return nil
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

// DefaultCompileCacheDir is the compiled code's directory inside a repo.
const DefaultCompileCacheDir = "wasm-cache"

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
	FailReports        int      `toml:"fail_reports"`
	// AdvertTTL and StakeTTL are local: how old an advertisement may be
	// for its processor to count as live, and how long a stake read from
	// the escrow is reused.
	AdvertTTL Duration `toml:"advert_ttl"`
	StakeTTL  Duration `toml:"stake_ttl"`
	// ProbeWindow and ProbeDeadline are the probe schedule
	// (probe.Config): each processor challenges once per window; answers
	// count within the deadline. A window of 0 turns probes off.
	ProbeWindow   Duration `toml:"probe_window"`
	ProbeDeadline Duration `toml:"probe_deadline"`
}

func dispatchSection(d dispatch.Config, advertTTL, stakeTTL time.Duration, probes probe.Config) DispatchConfig {
	return DispatchConfig{
		TaskOverhead: Duration(d.TaskOverhead), UnitTime: Duration(d.UnitTime),
		QueueAlpha: d.QueueAlpha, MinQueueLen: d.MinQueueLen,
		MinModelHolders: d.MinModelHolders, MaxReplicas: d.MaxReplicas,
		RoundScores: slices.Clone(d.RoundScores), FeeBasePoints: d.FeeBasePoints, ScoreWindow: d.ScoreWindow, NewNodeTaskScore: d.NewNodeTaskScore,
		SpeedWeight: d.SpeedWeight, VRAMWeight: d.VRAMWeight, TimeoutWeight: d.TimeoutWeight,
		MinTimeout:        Duration(d.MinTimeout),
		KickTimeoutWindow: d.KickTimeoutWindow, KickTimeouts: d.KickTimeouts,
		KickScoreWindow: d.KickScoreWindow, KickScoreThreshold: d.KickScoreThreshold, KickLowStreak: d.KickLowStreak,
		FailReports: d.FailReports,
		AdvertTTL:   Duration(advertTTL), StakeTTL: Duration(stakeTTL),
		ProbeWindow: Duration(probes.Window), ProbeDeadline: Duration(probes.Deadline),
	}
}

// probes converts the section's probe schedule for the probe package.
func (c DispatchConfig) probes() probe.Config {
	p := probe.DefaultConfig()
	p.Window, p.Deadline = time.Duration(c.ProbeWindow), time.Duration(c.ProbeDeadline)
	return p
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
		FailReports: c.FailReports,
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
	pc.HoldWait = time.Duration(c.Processor.HoldWait)
	pc.ProgressWindow = time.Duration(c.Processor.ProgressWindow)
	pc.Wasm.MemoryLimitBytes = uint64(c.Processor.MaxMemoryMiBJob) << 20
	pc.Wasm.Timeout = time.Duration(c.Processor.BlockTimeout)
	pc.Wasm.MaxOutputBytes = int64(c.Processor.MaxBlockOutputMiB) << 20
	pc.Wasm.CacheDir = c.Processor.CompileCacheDir
	pc.Dispatch = c.Dispatch.config()
	pc.AdvertTTL = time.Duration(c.Dispatch.AdvertTTL)
	pc.StakeTTL = time.Duration(c.Dispatch.StakeTTL)
	pc.Probes = c.Dispatch.probes()
	pc.Fetch.AllowPrivateAddresses = c.Fetch.AllowPrivateAddresses
	// Two rebroadcasts and a DAG walk's wait: by then a restarted
	// replica has heard the mesh's heads and walked to them.
	pc.CatchUp = 2*time.Duration(c.Store.Rebroadcast) + time.Duration(c.Store.DAGSyncTimeout)
	return pc
}
