package node

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
)

// KeystoreFile is the name `jobnode wallet new --keystore` gives the
// repo's keystore wallet.
const KeystoreFile = "wallet.json"

// maxKeystoreSize bounds a keystore file read from disk; real ones are
// about 500 bytes.
const maxKeystoreSize = 64 << 10

var (
	// ErrNoPassphrase: the repo's wallet is a keystore and no passphrase
	// was given.
	ErrNoPassphrase = errors.New("node: the wallet is a keystore and needs its passphrase")
	// ErrBadPassphrase: the passphrase does not open the keystore.
	ErrBadPassphrase = errors.New("node: wrong wallet passphrase")
	// ErrWalletExists: a wallet file would be overwritten.
	ErrWalletExists = errors.New("node: wallet file already exists")
	// ErrBadWallet: a key or keystore file could not be read.
	ErrBadWallet = errors.New("node: bad wallet file")
)

// WalletConfig is the [wallet] section: where the repo's wallet key is.
type WalletConfig struct {
	// Keystore is a go-ethereum keystore file (encrypted with a
	// passphrase), absolute or relative to the repo. Default "": the raw
	// hex key wallet.key that `jobnode init` writes, the development
	// default.
	Keystore string `toml:"keystore"`
}

func (c WalletConfig) validate() error {
	if strings.ContainsRune(c.Keystore, 0) {
		return fmt.Errorf("%w: [wallet] keystore is not a path", ErrInvalidConfig)
	}
	return nil
}

// KeystorePath is the keystore file's path for a repo in dir; "" when the
// wallet is the raw wallet.key.
func (c WalletConfig) KeystorePath(dir string) string {
	if c.Keystore == "" {
		return ""
	}
	if filepath.IsAbs(c.Keystore) {
		return c.Keystore
	}
	return filepath.Join(dir, c.Keystore)
}

// Passphrase supplies a keystore's passphrase when one is needed; it is
// not called for a raw key.
type Passphrase func() (string, error)

// LoadWallet loads the wallet of the repo in dir with config cfg: the
// keystore named by [wallet] keystore, opened with pass, or else wallet.key.
// It returns nil and no error when the repo has no wallet key (it was
// created with another wallet's address). A key that is not the
// configured [processor] wallet is refused.
func LoadWallet(dir string, cfg Config, pass Passphrase) (*ecdsa.PrivateKey, error) {
	var key *ecdsa.PrivateKey
	if path := cfg.Wallet.KeystorePath(dir); path != "" {
		b, err := readLimited(path, maxKeystoreSize)
		if err != nil {
			return nil, fmt.Errorf("%w: keystore %s: %w", ErrBadWallet, path, err)
		}
		if pass == nil {
			return nil, ErrNoPassphrase
		}
		p, err := pass()
		if err != nil {
			return nil, err
		}
		key, err = decryptKeystore(b, p)
		if err != nil {
			return nil, fmt.Errorf("keystore %s: %w", path, err)
		}
	} else {
		path := filepath.Join(dir, WalletFile)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		var err error
		if key, err = ethcrypto.LoadECDSA(path); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrBadWallet, path, err)
		}
	}
	if w := cfg.Processor.Wallet; w != "" && !strings.EqualFold(w, WalletAddress(key)) {
		return nil, fmt.Errorf("%w: the wallet key is %s, [processor] wallet is %s", ErrInvalidConfig, WalletAddress(key), w)
	}
	return key, nil
}

func decryptKeystore(b []byte, pass string) (*ecdsa.PrivateKey, error) {
	k, err := keystore.DecryptKey(b, pass)
	if errors.Is(err, keystore.ErrDecrypt) {
		return nil, ErrBadPassphrase
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadWallet, err)
	}
	return k.PrivateKey, nil
}

func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return b, nil
}

// EncryptKeystore encrypts key into a go-ethereum keystore file (version 3)
// with passphrase. light picks the cheap scrypt parameters (for tests and
// throw-away dev wallets); otherwise the standard ones (about a second and
// 256 MiB to open).
func EncryptKeystore(key *ecdsa.PrivateKey, passphrase string, light bool) ([]byte, error) {
	n, p := keystore.StandardScryptN, keystore.StandardScryptP
	if light {
		n, p = keystore.LightScryptN, keystore.LightScryptP
	}
	id, err := uuid.NewRandom()
	if err != nil {
		return nil, fmt.Errorf("node: keystore id: %w", err)
	}
	b, err := keystore.EncryptKey(&keystore.Key{Id: id, Address: ethcrypto.PubkeyToAddress(key.PublicKey), PrivateKey: key}, passphrase, n, p)
	if err != nil {
		return nil, fmt.Errorf("node: encrypt keystore: %w", err)
	}
	return b, nil
}

// ParseKeyHex parses a hex private key (with or without 0x, surrounding
// white space ignored), as `jobnode wallet import` reads it.
func ParseKeyHex(b []byte) (*ecdsa.PrivateKey, error) {
	s := strings.TrimPrefix(strings.TrimSpace(string(b)), "0x")
	if len(s) != 64 {
		return nil, fmt.Errorf("%w: a private key is 64 hex digits, got %d characters", ErrBadWallet, len(s))
	}
	k, err := ethcrypto.HexToECDSA(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadWallet, err)
	}
	return k, nil
}

// InstallRawWallet writes key as the repo's wallet.key and makes it the
// repo's wallet: [wallet] keystore is cleared and [processor] wallet set to
// its address. It refuses to overwrite an existing wallet.key. The repo
// must be open (r), so no daemon runs on it meanwhile.
func (r *Repo) InstallRawWallet(key *ecdsa.PrivateKey) error {
	path := filepath.Join(r.Dir, WalletFile)
	if err := writeNew(path, []byte(fmt.Sprintf("%x", ethcrypto.FromECDSA(key)))); err != nil {
		return err
	}
	if err := r.updateConfig(func(c *Config) {
		c.Wallet.Keystore = ""
		c.Processor.Wallet = WalletAddress(key)
	}); err != nil {
		return err
	}
	r.WalletKey = key
	return nil
}

// InstallKeystoreWallet writes keyJSON (a keystore file that passphrase
// opens) as the repo's wallet.json and makes it the repo's wallet. It
// refuses to overwrite an existing wallet.json. A raw wallet.key already in
// the repo is left where it is (it may hold funds) but no longer used.
func (r *Repo) InstallKeystoreWallet(keyJSON []byte, passphrase string) (*ecdsa.PrivateKey, error) {
	if len(keyJSON) > maxKeystoreSize {
		return nil, fmt.Errorf("%w: keystore larger than %d bytes", ErrBadWallet, maxKeystoreSize)
	}
	key, err := decryptKeystore(keyJSON, passphrase)
	if err != nil {
		return nil, err
	}
	if err := writeNew(filepath.Join(r.Dir, KeystoreFile), keyJSON); err != nil {
		return nil, err
	}
	if err := r.updateConfig(func(c *Config) {
		c.Wallet.Keystore = KeystoreFile
		c.Processor.Wallet = WalletAddress(key)
	}); err != nil {
		return nil, err
	}
	r.WalletKey = key
	return key, nil
}

// UnlockWallet loads the repo's wallet key if OpenRepo did not (a keystore
// needs its passphrase).
func (r *Repo) UnlockWallet(pass Passphrase) error {
	if r.WalletKey != nil {
		return nil
	}
	k, err := LoadWallet(r.Dir, r.Config, pass)
	if err != nil {
		return err
	}
	r.WalletKey = k
	return nil
}

// updateConfig rewrites the repo's config file with f applied, and applies
// f to r.Config. The file is read again, so what OpenRepo resolved (a
// relative model_dir or compile_cache_dir) is written back as the file
// had it.
func (r *Repo) updateConfig(f func(*Config)) error {
	path := filepath.Join(r.Dir, ConfigFile)
	cfg, err := LoadConfig(path)
	if err != nil {
		return err
	}
	f(&cfg)
	if err := cfg.Validate(); err != nil {
		return err
	}
	b, err := cfg.Encode()
	if err != nil {
		return err
	}
	if err := writeFileAtomic(path, b, 0o600); err != nil {
		return err
	}
	f(&r.Config)
	return nil
}

// writeNew creates path with b, mode 0600, failing with ErrWalletExists if
// it is there.
func writeNew(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: %s", ErrWalletExists, path)
	}
	if err != nil {
		return fmt.Errorf("node: write %s: %w", path, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("node: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("node: write %s: %w", path, err)
	}
	return f.Close()
}
