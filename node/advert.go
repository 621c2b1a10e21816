package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/records"

	"github.com/jobmesh/jobmesh/internal/strictjson"
)

// Advert is what a processor tells the mesh about itself.
type Advert struct {
	PeerID    string   `json:"peer_id"`
	Role      Role     `json:"role"`
	CardModel string   `json:"card_model"`
	VRAMMiB   uint64   `json:"vram_mib"`
	CPUs      int      `json:"cpus"`
	Models    []string `json:"models"`
	Wallet    string   `json:"wallet"`
	Version   string   `json:"version"`
	Addrs     []string `json:"addrs"`
	// ProcessTimeout is the node's MicroJob timeout setting, in seconds
	// (QoS scores it).
	ProcessTimeout int64 `json:"process_timeout_s"`
	// Updated is when the node last refreshed the advertisement.
	Updated time.Time `json:"updated"`
	// Started is when the node last started. A processor the QoS rules
	// kicked out rejoins by starting again after its kick
	// (meshview.Advertised.Started); zero in an older advertisement.
	Started time.Time `json:"started"`
}

// ErrBadAdvert is wrapped when an advertisement does not hold together.
var ErrBadAdvert = errors.New("node: bad advertisement")

// Validate checks an advertisement read from the store.
func (a Advert) Validate() error {
	switch {
	case a.PeerID == "":
		return fmt.Errorf("%w: no peer id", ErrBadAdvert)
	case a.CardModel == "" || len(a.CardModel) > 128:
		return fmt.Errorf("%w: card model %q", ErrBadAdvert, a.CardModel)
	case a.CPUs <= 0:
		return fmt.Errorf("%w: cpus %d", ErrBadAdvert, a.CPUs)
	case a.Wallet != "" && !isHexAddress(a.Wallet):
		return fmt.Errorf("%w: wallet %q", ErrBadAdvert, a.Wallet)
	case len(a.Models) > maxAdvertModels:
		return fmt.Errorf("%w: %d models", ErrBadAdvert, len(a.Models))
	}
	return nil
}

// maxAdvertModels bounds an advertisement's model list.
const maxAdvertModels = 1024

// MaxAdvertSize bounds an encoded advertisement.
const MaxAdvertSize = 64 << 10

// DecodeAdvert decodes and validates an advertisement payload. Unknown
// fields are refused, so a newer schema is noticed rather than misread.
func DecodeAdvert(b []byte) (Advert, error) {
	var a Advert
	if err := strictjson.Decode(b, MaxAdvertSize, &a); err != nil {
		return a, fmt.Errorf("%w: %w", ErrBadAdvert, err)
	}
	return a, a.Validate()
}

// Advertise writes this node's advertisement now.
func (n *Node) Advertise(ctx context.Context) error {
	pc := n.Config.Processor
	addrs := make([]string, 0)
	for _, a := range n.Host.FullAddrs() {
		addrs = append(addrs, a.String())
	}
	ad := Advert{
		PeerID:         n.Host.ID().String(),
		Role:           n.Role,
		CardModel:      pc.CardModel,
		VRAMMiB:        pc.VRAMMiB,
		CPUs:           pc.CPUs,
		Models:         n.advertisedModels(),
		Wallet:         pc.Wallet,
		Version:        Version,
		Addrs:          addrs,
		ProcessTimeout: int64(time.Duration(pc.ProcessTimeout) / time.Second),
		Updated:        time.Now().UTC().Truncate(time.Second),
		Started:        n.started.UTC(),
	}
	if err := crdt.PutJSON(ctx, n.Store, records.AdvertKey(ad.PeerID), records.AdvertType, ad); err != nil {
		return fmt.Errorf("node: advertise: %w", err)
	}
	return nil
}

// advertisedModels are the models on this node's disk: the [processor]
// models list and the model store's contents, sorted and distinct, at
// most maxAdvertModels.
func (n *Node) advertisedModels() []string {
	out := slices.Clone(n.Config.Processor.Models)
	if n.Models != nil {
		out = append(out, n.Models.List()...)
	}
	out = slices.Compact(slices.Sorted(slices.Values(out)))
	if len(out) > maxAdvertModels {
		n.Log.Warn("more models on disk than an advertisement lists; advertising the first", "models", len(out), "max", maxAdvertModels)
		out = out[:maxAdvertModels]
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// BindWallet writes this node's wallet binding (processor.WalletBinding:
// its peer ID signed by its wallet key) unless the store holds a valid one
// for that wallet already. A node without a wallet key binds nothing: a
// mesh without a chain needs no binding. A processor calls it at start and
// with every advertisement refresh, so a binding that went missing is
// written again.
func (n *Node) BindWallet(ctx context.Context) error {
	if n.walletKey == nil {
		return nil
	}
	self := n.Host.ID().String()
	key := records.WalletBindingKey(self)
	if r, err := n.Store.Get(ctx, key); err == nil {
		if wb, err := records.OpenWalletBinding(r); err == nil && wb.Wallet == WalletAddress(n.walletKey) {
			return nil
		}
	}
	wb, err := records.NewWalletBinding(self, n.walletKey)
	if err != nil {
		return err
	}
	if err := crdt.PutJSON(ctx, n.Store, key, records.WalletBindingType, wb); err != nil {
		return fmt.Errorf("node: bind wallet: %w", err)
	}
	n.Log.Info("wallet bound to this peer", "wallet", wb.Wallet)
	return nil
}

func (n *Node) keepAdvertising(ctx context.Context) {
	defer n.wg.Done()
	t := time.NewTicker(time.Duration(n.Config.Processor.AdvertiseEvery))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := n.Advertise(ctx); err != nil && ctx.Err() == nil {
				n.Log.Warn("refresh advertisement", "err", err)
			}
			if err := n.BindWallet(ctx); err != nil && ctx.Err() == nil {
				n.Log.Warn("refresh wallet binding", "err", err)
			}
		}
	}
}

// Processors lists the processors known from the store, by peer ID. An
// advertisement that does not decode or validate, or whose peer ID is not
// its author, is skipped and logged. On a node with a chain, an
// advertisement's wallet is replaced by its peer's bound wallet ("" when
// it has none), so that no processor is weighted by a stake it only
// claims (processor.WalletBinding).
func (n *Node) Processors(ctx context.Context) ([]Advert, error) {
	recs, err := n.Store.Query(ctx, records.NodesPrefix)
	if err != nil {
		return nil, fmt.Errorf("node: list processors: %w", err)
	}
	out := make([]Advert, 0, len(recs))
	for _, r := range recs {
		if r.Type != records.AdvertType || r.Tombstone {
			continue
		}
		a, err := DecodeAdvert(r.Payload)
		if err != nil || a.PeerID != r.AuthorText() || a.Role != RoleProcessor {
			n.Log.Warn("skipping invalid advertisement", "key", r.Key, "author", r.Author, "err", err)
			continue
		}
		if n.Escrow != nil {
			a.Wallet = n.bindings.wallet(ctx, n.Store, a.PeerID)
		}
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b Advert) int { return strings.Compare(a.PeerID, b.PeerID) })
	return out, nil
}

// bindingCache holds the wallet bindings read from the store, each
// verified once (by record seq).
type bindingCache struct {
	mu sync.Mutex
	m  map[string]boundWallet
}

type boundWallet struct {
	seq    uint64
	wallet string // "" for a binding that does not verify
}

// wallet is peerID's verified bound wallet, "" when it has none.
func (c *bindingCache) wallet(ctx context.Context, store crdt.Getter, peerID string) string {
	r, err := store.Get(ctx, records.WalletBindingKey(peerID))
	if err != nil {
		return ""
	}
	c.mu.Lock()
	b, ok := c.m[peerID]
	c.mu.Unlock()
	if ok && b.seq == r.Seq {
		return b.wallet
	}
	b = boundWallet{seq: r.Seq}
	if wb, err := records.OpenWalletBinding(r); err == nil {
		b.wallet = wb.Wallet
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]boundWallet{}
	}
	c.m[peerID] = b
	return b.wallet
}
