package node

import (
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	pebbleds "github.com/ipfs/go-ds-pebble"
	"github.com/libp2p/go-libp2p/core/crypto"

	"github.com/jobmesh/jobmesh/p2p"
)

// Files and directories inside a repo.
const (
	ConfigFile   = "config.toml"
	IdentityFile = "identity.key"
	WalletFile   = "wallet.key"
	DatastoreDir = "datastore"
	APIFile      = "api"
	// APITokenFile holds the bearer token of the repo's HTTP API: 64 hex
	// digits (32 random bytes), mode 0600. Whoever can read it can spend
	// the node's wallet through the API.
	APITokenFile = "api.token"
	lockFile     = "repo.lock"
)

// apiTokenBytes is the API token's entropy.
const apiTokenBytes = 32

var (
	// ErrRepoExists is returned by InitRepo for a directory that already
	// holds a repo.
	ErrRepoExists = errors.New("node: repo already initialised")
	// ErrNoRepo is returned when a directory holds no repo.
	ErrNoRepo = errors.New("node: no repo (run 'jobnode init')")
	// ErrRepoLocked is returned when another process has the repo open.
	ErrRepoLocked = errors.New("node: repo is in use by another process")
	// ErrNotRunning is returned when no daemon serves the repo's API.
	ErrNotRunning = errors.New("node: no daemon running on this repo")
	// ErrBadAPIToken is returned for an API token file that is not 64 hex
	// digits, or that other users may read.
	ErrBadAPIToken = errors.New("node: bad api.token")
)

// InitRepo creates a repo in dir: a new identity, cfg as a documented
// config file, and an empty datastore. It refuses to touch an existing repo.
func InitRepo(dir string, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, ConfigFile)); err == nil {
		return fmt.Errorf("%w: %s", ErrRepoExists, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, IdentityFile)); err == nil {
		return fmt.Errorf("%w: %s", ErrRepoExists, dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("node: create repo: %w", err)
	}
	key, err := p2p.GenerateIdentity()
	if err != nil {
		return err
	}
	if err := p2p.SaveIdentity(filepath.Join(dir, IdentityFile), key); err != nil {
		return err
	}
	if cfg.Processor.Wallet == "" {
		// A new repo gets its own wallet, so a processor can be paid
		// without further set-up.
		wk, err := ethcrypto.GenerateKey()
		if err != nil {
			return fmt.Errorf("node: generate wallet: %w", err)
		}
		if err := ethcrypto.SaveECDSA(filepath.Join(dir, WalletFile), wk); err != nil {
			return fmt.Errorf("node: save wallet: %w", err)
		}
		cfg.Processor.Wallet = strings.ToLower(ethcrypto.PubkeyToAddress(wk.PublicKey).Hex())
	}
	if _, err := newAPIToken(dir); err != nil {
		return err
	}
	b, err := cfg.Encode()
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, ConfigFile), b, 0o600); err != nil {
		return err
	}
	ds, err := pebbleds.NewDatastore(filepath.Join(dir, DatastoreDir), datastoreOptions()...)
	if err != nil {
		return fmt.Errorf("node: create datastore: %w", err)
	}
	return ds.Close()
}

// Repo is an opened repo directory, locked against other processes.
type Repo struct {
	Dir      string
	Config   Config
	Identity crypto.PrivKey
	// WalletKey is the repo's wallet key; nil when the repo was created
	// with another wallet's address, or until UnlockWallet opens a
	// keystore wallet.
	WalletKey *ecdsa.PrivateKey
	lock      *os.File
}

// OpenRepo loads a repo's config and identity and takes its lock. A
// relative [processor] model_dir or compile_cache_dir is resolved inside
// the repo.
func OpenRepo(dir string) (*Repo, error) {
	if _, err := os.Stat(filepath.Join(dir, ConfigFile)); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNoRepo, dir)
	}
	cfg, err := LoadConfig(filepath.Join(dir, ConfigFile))
	if err != nil {
		return nil, err
	}
	for _, d := range []*string{&cfg.Processor.ModelDir, &cfg.Processor.CompileCacheDir} {
		if *d != "" && !filepath.IsAbs(*d) {
			*d = filepath.Join(dir, *d)
		}
	}
	key, err := p2p.LoadIdentity(filepath.Join(dir, IdentityFile))
	if err != nil {
		return nil, err
	}
	var wallet *ecdsa.PrivateKey
	if cfg.Wallet.Keystore == "" {
		if wallet, err = LoadWallet(dir, cfg, nil); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("node: lock repo: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s", ErrRepoLocked, dir)
	}
	return &Repo{Dir: dir, Config: cfg, Identity: key, WalletKey: wallet, lock: f}, nil
}

// OpenDatastore opens the repo's persistent datastore; the caller closes it.
func (r *Repo) OpenDatastore() (*pebbleds.Datastore, error) {
	ds, err := pebbleds.NewDatastore(filepath.Join(r.Dir, DatastoreDir), datastoreOptions()...)
	if err != nil {
		return nil, fmt.Errorf("node: open datastore: %w", err)
	}
	return ds, nil
}

// WriteAPIAddr records the running API's address, as kubo's api file does.
func (r *Repo) WriteAPIAddr(addr string) error {
	return writeFileAtomic(filepath.Join(r.Dir, APIFile), []byte(addr+"\n"), 0o600)
}

// APIToken returns the repo's API token, creating it when the repo has none
// (repos made before the API had tokens). A token file that other users
// may read is refused: they could spend the wallet with it.
func (r *Repo) APIToken() (string, error) {
	tok, err := readAPIToken(r.Dir, true)
	if errors.Is(err, fs.ErrNotExist) {
		return newAPIToken(r.Dir)
	}
	return tok, err
}

// ReadAPIToken returns the API token of the repo in dir, as the CLI and
// the SDK read it.
func ReadAPIToken(dir string) (string, error) {
	return readAPIToken(dir, false)
}

func readAPIToken(dir string, private bool) (string, error) {
	path := filepath.Join(dir, APITokenFile)
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("node: api token: %w", err)
	}
	if private && fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%w: %s has mode %v; other users can read it (chmod 600 it, or delete it for a new one)", ErrBadAPIToken, path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("node: api token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if _, err := hex.DecodeString(tok); err != nil || len(tok) != 2*apiTokenBytes {
		return "", fmt.Errorf("%w: %s is not %d hex digits", ErrBadAPIToken, path, 2*apiTokenBytes)
	}
	return tok, nil
}

// newAPIToken writes a fresh random token to dir's token file.
func newAPIToken(dir string) (string, error) {
	b := make([]byte, apiTokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("node: generate api token: %w", err)
	}
	tok := hex.EncodeToString(b)
	if err := writeFileAtomic(filepath.Join(dir, APITokenFile), []byte(tok+"\n"), 0o600); err != nil {
		return "", err
	}
	return tok, nil
}

// Close removes the api file and releases the lock.
func (r *Repo) Close() error {
	_ = os.Remove(filepath.Join(r.Dir, APIFile))
	return r.lock.Close()
}

// ReadAPIAddr returns the address of the daemon running on the repo in dir.
func ReadAPIAddr(dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, ConfigFile)); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: %s", ErrNoRepo, dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, APIFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: %s", ErrNotRunning, dir)
	}
	if err != nil {
		return "", fmt.Errorf("node: read api file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func writeFileAtomic(path string, b []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("node: write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("node: write %s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return fmt.Errorf("node: write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("node: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("node: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("node: write %s: %w", path, err)
	}
	return nil
}

// DatastoreCacheBytes is the datastore's block cache: pebble's default is
// 8 MiB, which a busy node's store and block records outgrow.
const DatastoreCacheBytes = 64 << 20

// datastoreOptions are the repo datastore's pebble settings. A Bloom
// filter on every level makes a lookup of an absent key cheap: the
// replicated store asks whether each block it meets was processed already,
// and the block store whether it holds each block it is offered or asked
// for, and most of those answers are no.
func datastoreOptions() []pebbleds.Option {
	opts := &pebble.Options{}
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	return []pebbleds.Option{pebbleds.WithPebbleOpts(opts), pebbleds.WithCacheSize(DatastoreCacheBytes)}
}
