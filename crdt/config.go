package crdt

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/ipfs/go-datastore"
	ipld "github.com/ipfs/go-ipld-format"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/prometheus/client_golang/prometheus"
)

// Config configures a Store. Datastore, DAGService, PubSub and PrivKey have
// no default and must be set; the Store does not own them.
type Config struct {
	// Namespace is the datastore prefix under which go-ds-crdt keeps its
	// state. Default "/jobmesh/v2/mesh".
	Namespace string
	// Datastore persists the replica (the node passes go-ds-pebble). It
	// should be synchronous or synced by its owner. Required.
	Datastore datastore.Batching
	// DAGService stores and fetches the CRDT's Merkle-DAG blocks (the node
	// passes its bitswap-backed DAG service). Required.
	DAGService ipld.DAGService
	// LocalBlocks, if set, tells which DAG blocks are already in the local
	// block store (the node passes its block store); with it, a DAG walk
	// that needs a block which is not local first waits up to
	// AnnounceWait for a broadcast to bring it (see awaitDAG). Default
	// nil: missing blocks are fetched from the network at once.
	LocalBlocks LocalBlocks
	// AnnounceWait is how long a DAG walk waits for a missing block to
	// arrive with a broadcast before it fetches the block over bitswap.
	// Default 3s: most such blocks arrive with a broadcast within that time;
	// 0 fetches at once.
	AnnounceWait time.Duration
	// Backfill, with LocalBlocks, serves this store's DAG to peers that
	// ask and asks the author of an announcement far above this replica
	// for the history below it (one stream instead of a bitswap round
	// trip per delta). Default nil: off. The Store does not own it.
	Backfill *Backfill
	// PubSub carries head announcements between replicas. Required.
	PubSub *pubsub.PubSub
	// Topic is the pubsub topic of the announcements. The Store joins it
	// and registers its validator itself, so nothing else in the process
	// may join it. Default "/jobmesh/2/crdt".
	Topic string
	// PrivKey is this node's libp2p Ed25519 key; every local write is
	// signed with it. Required.
	PrivKey crypto.PrivKey
	// Logger receives the store's logs (and go-ds-crdt's). Default
	// slog.Default().
	Logger *slog.Logger
	// Registerer receives the store's metrics. Default nil: metrics are
	// kept but not registered.
	Registerer prometheus.Registerer
	// FloodPublish says that PubSub sends this node's own messages to
	// every subscriber of the topic it knows, not only to its mesh peers
	// (pubsub.WithFloodPublish, as the node's host does): a greeting whose
	// heads this replica published itself after the peers joined is then
	// left out (reannounce). Default false: every greeting goes out.
	FloodPublish bool
	// RebroadcastInterval is how often current heads are re-announced so
	// that replicas which missed a message, or were offline, catch up.
	// Default 15s.
	RebroadcastInterval time.Duration
	// MaxPayload is the largest payload accepted on write and on read, in
	// bytes, at most 1 MiB. Default 256 KiB.
	MaxPayload int
	// AuthorPolicy, if set, restricts which author may write which key; it
	// is checked on every read and on local writes. Default nil (any
	// author). See OwnerPolicy.
	AuthorPolicy AuthorPolicy
	// Carriage, if set, names the record types that carry other records
	// and which records each may carry (carry.go). Default nil: a record
	// carries nothing.
	Carriage *Carriage
	// WatchBuffer is the channel capacity of each Watch. Default 256.
	WatchBuffer int
	// NumWorkers is the number of go-ds-crdt DAG walkers. Default 5.
	NumWorkers int
	// DAGSyncTimeout bounds fetching one DAG block from the network.
	// Default 2m.
	DAGSyncTimeout time.Duration
	// RepairInterval is how often the store re-walks a DAG that go-ds-crdt
	// marked dirty after a failed sync, and at least ten times as long as
	// the last repair took. Default 1h; 0 disables.
	RepairInterval time.Duration
	// MaxBroadcastHeads bounds the heads in one announcement; larger
	// announcements are dropped by the topic validator. Default 256.
	MaxBroadcastHeads int
	// SerialHeads makes go-ds-crdt walk received heads one at a time, its
	// own default. Default false: each received head is walked at once, in
	// parallel with the others, so that under a burst of writes from many
	// replicas one slow head does not hold back the records behind the
	// others, at the cost of more DAG branches.
	SerialHeads bool
	// BroadcastBuffer is how many received head announcements wait for
	// go-ds-crdt before newer ones are dropped (a dropped one comes back
	// with the next re-broadcast). Default 1024.
	BroadcastBuffer int
	// RejectLogMemory is how many distinct rejected records are remembered
	// so that each is logged and counted once. Default 4096.
	RejectLogMemory int
	// VerifiedCache is how many verified records are remembered (by hash,
	// 32 bytes each) so that re-reading them skips the signature check.
	// Default 65536.
	VerifiedCache int
}

// maxPayloadLimit keeps one record's DAG block well under bitswap's 2 MiB
// block limit, so that every record can travel between replicas.
const maxPayloadLimit = 1 << 20

// DefaultConfig returns a Config with every optional field at its default.
func DefaultConfig() Config {
	return Config{
		Namespace:           "/jobmesh/v2/mesh",
		Topic:               "/jobmesh/2/crdt",
		Logger:              slog.Default(),
		RebroadcastInterval: 15 * time.Second,
		MaxPayload:          256 << 10,
		WatchBuffer:         256,
		NumWorkers:          5,
		DAGSyncTimeout:      2 * time.Minute,
		AnnounceWait:        3 * time.Second,
		RepairInterval:      time.Hour,
		MaxBroadcastHeads:   256,
		BroadcastBuffer:     1024,
		RejectLogMemory:     4096,
		VerifiedCache:       65536,
	}
}

// Validate reports the first missing or out-of-range field.
func (c *Config) Validate() error {
	switch {
	case c.Namespace == "" || datastore.NewKey(c.Namespace).String() != c.Namespace:
		return fmt.Errorf("%w: Namespace %q must be a clean absolute key", ErrInvalidConfig, c.Namespace)
	case c.Datastore == nil:
		return fmt.Errorf("%w: Datastore is required", ErrInvalidConfig)
	case c.DAGService == nil:
		return fmt.Errorf("%w: DAGService is required", ErrInvalidConfig)
	case c.PubSub == nil:
		return fmt.Errorf("%w: PubSub is required", ErrInvalidConfig)
	case c.Topic == "":
		return fmt.Errorf("%w: Topic is required", ErrInvalidConfig)
	case c.PrivKey == nil:
		return fmt.Errorf("%w: PrivKey is required", ErrInvalidConfig)
	case c.PrivKey.Type() != crypto.Ed25519:
		return fmt.Errorf("%w: PrivKey must be Ed25519, got %v", ErrInvalidConfig, c.PrivKey.Type())
	case c.Logger == nil:
		return fmt.Errorf("%w: Logger is required", ErrInvalidConfig)
	case c.RebroadcastInterval <= 0:
		return fmt.Errorf("%w: RebroadcastInterval must be positive", ErrInvalidConfig)
	case c.MaxPayload <= 0 || c.MaxPayload > maxPayloadLimit:
		return fmt.Errorf("%w: MaxPayload %d out of (0, %d]", ErrInvalidConfig, c.MaxPayload, maxPayloadLimit)
	case c.WatchBuffer < 2:
		return fmt.Errorf("%w: WatchBuffer must be at least 2", ErrInvalidConfig)
	case c.NumWorkers <= 0:
		return fmt.Errorf("%w: NumWorkers must be positive", ErrInvalidConfig)
	case c.DAGSyncTimeout < 0:
		return fmt.Errorf("%w: DAGSyncTimeout must not be negative", ErrInvalidConfig)
	case c.AnnounceWait < 0:
		return fmt.Errorf("%w: AnnounceWait must not be negative", ErrInvalidConfig)
	case c.RepairInterval < 0:
		return fmt.Errorf("%w: RepairInterval must not be negative", ErrInvalidConfig)
	case c.BroadcastBuffer <= 0:
		return fmt.Errorf("%w: BroadcastBuffer must be positive", ErrInvalidConfig)
	case c.MaxBroadcastHeads <= 0:
		return fmt.Errorf("%w: MaxBroadcastHeads must be positive", ErrInvalidConfig)
	case c.RejectLogMemory <= 0:
		return fmt.Errorf("%w: RejectLogMemory must be positive", ErrInvalidConfig)
	case c.VerifiedCache <= 0:
		return fmt.Errorf("%w: VerifiedCache must be positive", ErrInvalidConfig)
	case c.Carriage != nil:
		return c.Carriage.validate()
	}
	return nil
}
