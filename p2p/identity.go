package p2p

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

// GenerateIdentity returns a new Ed25519 libp2p key.
func GenerateIdentity() (crypto.PrivKey, error) {
	priv, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("p2p: generate identity: %w", err)
	}
	return priv, nil
}

// SaveIdentity writes key to path, readable by the owner only. It refuses to
// overwrite an existing file, so an identity is never lost by accident.
func SaveIdentity(path string, key crypto.PrivKey) error {
	b, err := crypto.MarshalPrivateKey(key)
	if err != nil {
		return fmt.Errorf("p2p: marshal identity: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("p2p: save identity: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("p2p: save identity: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("p2p: save identity: %w", err)
	}
	return f.Close()
}

// LoadIdentity reads a key written by SaveIdentity.
func LoadIdentity(path string) (crypto.PrivKey, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("p2p: no identity at %s: %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("p2p: load identity: %w", err)
	}
	key, err := crypto.UnmarshalPrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("p2p: identity at %s is corrupt: %w", path, err)
	}
	return key, nil
}

// ParseAddrInfos parses full multiaddrs (each ending in /p2p/<id>) and merges
// the addresses of the same peer.
func ParseAddrInfos(addrs []string) ([]peer.AddrInfo, error) {
	mas := make([]ma.Multiaddr, 0, len(addrs))
	for _, s := range addrs {
		m, err := ma.NewMultiaddr(s)
		if err != nil {
			return nil, fmt.Errorf("address %q: %w", s, err)
		}
		mas = append(mas, m)
	}
	infos, err := peer.AddrInfosFromP2pAddrs(mas...)
	if err != nil {
		return nil, fmt.Errorf("addresses must end in /p2p/<peer id>: %w", err)
	}
	return infos, nil
}
