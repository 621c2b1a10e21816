package node

import (
	"strings"
	"text/template"

	"github.com/pelletier/go-toml/v2"
)

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
# Connection manager watermarks: trim to conn_low when over conn_high. The
# resource manager admits at least twice conn_high connections, so a busy
# node trims old connections rather than refusing new peers.
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
# While the store advertises at most this many processors, the node dials
# every one of them, so that a small mesh whose DHT cannot route still
# connects. Above it the node keeps its bootstrap peers, the DHT's and
# those of the topics it joins, so that its connections do not grow with
# the mesh. 0: never dial every advertised processor.
dial_all_below = {{toml .P2P.DialAllBelow}}

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
# Give each job a replicated store of its own, which only the nodes taking
# part in the job (the processors that could serve it, its creator's node)
# hold; the mesh's store keeps adverts, job announcements and outcomes.
# "auto": on where this node has a chain; "on"; "off": every job's records
# in the mesh's store. Every node of a mesh must keep them alike.
job_stores = {{toml .Store.JobStores}}
# With job stores: keep each MacroJob's commitments and disclosures in a
# store of its own, held by its members, and give the job's other nodes
# the MacroJob's aggregates instead. Every node of a mesh must set it alike.
room_stores = {{toml .Store.RoomStores}}
# How long a job's own store is kept once the job is over (settled,
# refunded, aborted or past its deadline), for anyone auditing it; then its
# records and their blocks are deleted. The job's outcome stays readable.
job_retention = {{toml .Store.JobRetention}}

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
# How long the processor that writes a job's verdict waits for a second
# node (the creator's when it is connected) to hold the job's output; after
# it, the verdict is written anyway. 0: no wait.
hold_wait = {{toml .Processor.HoldWait}}
# How often, at most, this processor tells a job's other processors which
# MicroJobs are complete (those of the rooms it owns, once done, and the
# verifiers it ran: one message per window), and answers their claims on
# the rooms it owns (one answer per window, not one per claim). It must
# stay below the disclose grace (30s). 0: each at once.
progress_window = {{toml .Processor.ProgressWindow}}
# Per-block limits of the WebAssembly sandbox: the memory of one run (MiB),
# the time one block's run may take, and what it may write to stdout (MiB).
# A job may ask for less in its JobInfo; a job asking for more than these
# is not run here.
max_job_memory_mib = {{toml .Processor.MaxMemoryMiBJob}}
block_timeout = {{toml .Processor.BlockTimeout}}
max_block_output_mib = {{toml .Processor.MaxBlockOutputMiB}}
# Model store: one file per model, named by its CID. Models found there at
# start are advertised with the ones listed in 'models', and models this
# node is asked to pre-download (a job needs them and too few processors
# hold them) are fetched into it. A relative path is inside the repo;
# empty: no store, no pre-download.
model_dir = {{toml .Processor.ModelDir}}
# Native code compiled from jobs' WebAssembly, kept across restarts so that
# a restarted processor does not compile each job's code again. A relative
# path is inside the repo; empty: kept in memory only.
compile_cache_dir = {{toml .Processor.CompileCacheDir}}
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
# Fee weight of a credited result: its processor's task score (round scores
# of its commitment and disclosure positions), at least a floor of
# fee_base_points capped at the task score of the table's last place.
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
# A job is failed once fail_reports processors report the same failure of
# its code (the same MicroJob, the same kind) and a processor's own run
# failed so too; it is then refunded. 1 fits a one-processor mesh only.
fail_reports = {{toml .Dispatch.FailReports}}
# Probe tasks keep idle processors' speed scores current: each processor
# challenges itself and up to two others once per probe_window; answers
# count within probe_deadline (at most half the window). 0 turns them off.
probe_window = {{toml .Dispatch.ProbeWindow}}
probe_deadline = {{toml .Dispatch.ProbeDeadline}}
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

[log]
# The log goes to stderr. Lowest level written: "debug", "info", "warn" or
# "error". The --log-level flag overrides it.
level = {{toml .Log.Level}}
# "text": logfmt lines (time=... level=INFO msg=... key=value); "json": one
# JSON object a line with the keys time, level, msg and the record's
# attributes (log collectors read it as is). The --log-format flag
# overrides it.
format = {{toml .Log.Format}}
`))
