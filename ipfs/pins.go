package ipfs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ipfs/boxo/ipld/merkledag"
	"github.com/ipfs/go-cid"
	ds "github.com/ipfs/go-datastore"
	"github.com/ipfs/go-datastore/query"
	ipld "github.com/ipfs/go-ipld-format"

	"github.com/jobmesh/jobmesh/internal/strictjson"
)

// Pins keep DAGs from the garbage collector. A pin is recursive (the
// whole DAG under its CID) and belongs to an owner, a short label that
// says why it is kept ("upload", "job:<id>", "output:<id>",
// "model:<cid>"). One CID can have several owners, and stays pinned while
// any of them keeps it: each owner pins and releases its own, without
// knowing about the others. (boxo's dspinner keeps one name per CID, so
// the second owner's pin would be lost when the first unpinned.) A pin
// can carry an expiry, after which it no longer counts and the next GC
// removes it: Release turns every pin of an owner into one that expires
// after Config.PinRetention.
//
// A pin is the record /pins/<owner>/<cid> in the node's datastore, beside
// the blocks.

// ErrInvalidOwner is returned for an owner label the pin set cannot hold.
var ErrInvalidOwner = errors.New("ipfs: invalid pin owner")

// ErrBadPin is wrapped when a stored pin record does not decode.
var ErrBadPin = errors.New("ipfs: bad pin record")

// pinPrefix is the datastore prefix of the pin records.
const pinPrefix = "/pins"

// maxPinRecord bounds a stored pin record.
const maxPinRecord = 256

// maxOwner bounds an owner label.
const maxOwner = 128

// Pin is one owner's pin of a DAG.
type Pin struct {
	CID     cid.Cid
	Owner   string
	Created time.Time
	// Expires is when the pin stops counting; zero: never.
	Expires time.Time
}

// live reports whether the pin still keeps its DAG at now.
func (p Pin) live(now time.Time) bool { return p.Expires.IsZero() || now.Before(p.Expires) }

// pinRecord is the stored form of a Pin (version 1); times in Unix
// nanoseconds, 0 for none.
type pinRecord struct {
	V       int   `json:"v"`
	Created int64 `json:"created"`
	Expires int64 `json:"expires,omitempty"`
}

func validOwner(owner string) error {
	if owner == "" || len(owner) > maxOwner {
		return fmt.Errorf("%w: %q (1 to %d characters)", ErrInvalidOwner, owner, maxOwner)
	}
	for _, r := range owner {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(":._-", r)) {
			return fmt.Errorf("%w: %q (letters, digits and :._- only)", ErrInvalidOwner, owner)
		}
	}
	return nil
}

func pinKey(owner string, c cid.Cid) ds.Key {
	return ds.NewKey(pinPrefix + "/" + owner + "/" + c.String())
}

func encodePin(p Pin) ([]byte, error) {
	r := pinRecord{V: 1, Created: p.Created.UnixNano()}
	if !p.Expires.IsZero() {
		r.Expires = p.Expires.UnixNano()
	}
	return json.Marshal(r)
}

// decodePin decodes the pin record stored under key.
func decodePin(key string, b []byte) (Pin, error) {
	rest, ok := strings.CutPrefix(key, pinPrefix+"/")
	owner, cs, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		return Pin{}, fmt.Errorf("%w: key %q", ErrBadPin, key)
	}
	if err := validOwner(owner); err != nil {
		return Pin{}, fmt.Errorf("%w: %w", ErrBadPin, err)
	}
	c, err := cid.Decode(cs)
	if err != nil || c.String() != cs {
		return Pin{}, fmt.Errorf("%w: key %q: not a canonical CID", ErrBadPin, key)
	}
	var r pinRecord
	if err := strictjson.Decode(b, maxPinRecord, &r); err != nil {
		return Pin{}, fmt.Errorf("%w: %w", ErrBadPin, err)
	}
	if r.V != 1 || r.Created <= 0 || r.Expires < 0 {
		return Pin{}, fmt.Errorf("%w: version %d, created %d, expires %d", ErrBadPin, r.V, r.Created, r.Expires)
	}
	p := Pin{CID: c, Owner: owner, Created: time.Unix(0, r.Created)}
	if r.Expires != 0 {
		p.Expires = time.Unix(0, r.Expires)
	}
	return p, nil
}

// Pin keeps the DAG under c for owner until Unpin or Release. It fetches
// every block of the DAG that is not local first, so it returns only once
// the whole DAG is stored (or with ErrNotFound when the context ends
// before). Pinning what the owner already pinned only clears an expiry.
func (n *Node) Pin(ctx context.Context, c cid.Cid, owner string) error {
	return n.PinUntil(ctx, c, owner, time.Time{})
}

// PinUntil is Pin with an expiry: the pin stops counting at until (zero:
// never).
func (n *Node) PinUntil(ctx context.Context, c cid.Cid, owner string, until time.Time) error {
	if err := validOwner(owner); err != nil {
		return err
	}
	if !c.Defined() {
		return fmt.Errorf("ipfs: pin: undefined CID")
	}
	// The fetch runs without the GC lock: what it brings is recent, so
	// no GC takes it. Under the lock the DAG is checked again, since a GC
	// may have struck old local blocks in between.
	for try := 0; ; try++ {
		if err := merkledag.FetchGraph(ctx, c, n.dag); err != nil {
			if ctx.Err() != nil || ipld.IsNotFound(err) {
				return fmt.Errorf("%w: pin %s: %w", ErrNotFound, c, err)
			}
			return fmt.Errorf("ipfs: pin %s: %w", c, err)
		}
		n.gcMu.RLock()
		complete, err := n.localComplete(ctx, c)
		if err == nil && complete {
			err = n.putPin(ctx, Pin{CID: c, Owner: owner, Created: n.now(), Expires: until})
			n.gcMu.RUnlock()
			return err
		}
		n.gcMu.RUnlock()
		if err != nil {
			return err
		}
		if try >= 2 {
			return fmt.Errorf("%w: pin %s: blocks keep disappearing", ErrNotFound, c)
		}
	}
}

// putPin writes a pin record; the caller holds gcMu (read).
func (n *Node) putPin(ctx context.Context, p Pin) error {
	b, err := encodePin(p)
	if err != nil {
		return err
	}
	key := pinKey(p.Owner, p.CID)
	had, err := n.pins.Has(ctx, key)
	if err != nil {
		return fmt.Errorf("ipfs: pin %s: %w", p.CID, err)
	}
	if err := n.pins.Put(ctx, key, b); err != nil {
		return fmt.Errorf("ipfs: pin %s: %w", p.CID, err)
	}
	if !had {
		n.pinCount.Add(1)
	}
	n.log.Debug("pinned", "cid", p.CID, "owner", p.Owner, "expires", p.Expires)
	return nil
}

// Unpin drops owner's pin of c at once; the DAG goes at the next GC unless
// another pin keeps it. Unpinning what is not pinned is not an error.
func (n *Node) Unpin(ctx context.Context, c cid.Cid, owner string) error {
	if err := validOwner(owner); err != nil {
		return err
	}
	key := pinKey(owner, c)
	had, err := n.pins.Has(ctx, key)
	if err != nil || !had {
		return err
	}
	if err := n.pins.Delete(ctx, key); err != nil {
		return fmt.Errorf("ipfs: unpin %s: %w", c, err)
	}
	n.pinCount.Add(-1)
	return nil
}

// Release makes every pin of owner expire after Config.PinRetention
// (pins that expire sooner keep their expiry). It is what an owner calls
// when it is done: the content stays for the retention period, for the
// peers that may still ask for it.
func (n *Node) Release(ctx context.Context, owner string) error {
	if err := validOwner(owner); err != nil {
		return err
	}
	pins, err := n.queryPins(ctx, pinPrefix+"/"+owner)
	if err != nil {
		return err
	}
	until := n.now().Add(n.cfg.PinRetention)
	for _, p := range pins {
		if !p.Expires.IsZero() && !p.Expires.After(until) {
			continue
		}
		p.Expires = until
		b, err := encodePin(p)
		if err != nil {
			return err
		}
		if err := n.pins.Put(ctx, pinKey(p.Owner, p.CID), b); err != nil {
			return fmt.Errorf("ipfs: release %s: %w", owner, err)
		}
	}
	if len(pins) > 0 {
		n.log.Debug("pins released", "owner", owner, "pins", len(pins), "until", until)
	}
	return nil
}

// IsPinned reports whether some live pin keeps c (as a root; a block
// inside a pinned DAG is not itself a pin).
func (n *Node) IsPinned(ctx context.Context, c cid.Cid) (bool, error) {
	pins, err := n.Pins(ctx)
	if err != nil {
		return false, err
	}
	now := n.now()
	return slices.ContainsFunc(pins, func(p Pin) bool { return p.CID.Equals(c) && p.live(now) }), nil
}

// Pins returns every pin, expired ones the GC has not removed yet
// included, ordered by owner and CID.
func (n *Node) Pins(ctx context.Context) ([]Pin, error) {
	return n.queryPins(ctx, pinPrefix)
}

func (n *Node) queryPins(ctx context.Context, prefix string) ([]Pin, error) {
	res, err := n.pins.Query(ctx, query.Query{Prefix: prefix, Orders: []query.Order{query.OrderByKey{}}})
	if err != nil {
		return nil, fmt.Errorf("ipfs: reading pins: %w", err)
	}
	defer res.Close()
	var out []Pin
	for r, ok := res.NextSync(); ok; r, ok = res.NextSync() {
		if r.Error != nil {
			return nil, fmt.Errorf("ipfs: reading pins: %w", r.Error)
		}
		p, err := decodePin(r.Key, r.Value)
		if err != nil {
			// A damaged record must not stop the GC from keeping the
			// others; it keeps nothing itself.
			n.log.Warn("skipping a pin record", "key", r.Key, "err", err)
			continue
		}
		out = append(out, p)
	}
	return out, nil
}
