package main

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/node"
)

// passwordEnv names the environment variable that holds a keystore
// wallet's passphrase when --password-file is not given.
const passwordEnv = "JOBMESH_WALLET_PASSWORD"

// maxSecretFile bounds a passphrase or key file read from disk or stdin.
const maxSecretFile = 64 << 10

// chainFlags are the flags that pick the chain: they override the config's
// [chain] section.
type chainFlags struct {
	rpc    string
	escrow string
}

func (f *chainFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.rpc, "eth-rpc", "", "JSON-RPC endpoint of the chain (overrides [chain] rpc); a 'jobnode bootstrap --devchain' chain also tells its escrow")
	fs.StringVar(&f.escrow, "escrow", "", "escrow contract address 0x... (overrides [chain] contract)")
}

// apply writes the flags into cfg's [chain] section and checks it.
// config reads the repo's config with the flags applied.
func (f *chainFlags) config(dir string) (node.Config, error) {
	cfg, err := repoConfig(dir)
	if err != nil {
		return cfg, err
	}
	return cfg, f.apply(&cfg)
}

func (f *chainFlags) apply(cfg *node.Config) error {
	if f.rpc != "" {
		cfg.Chain.RPC = f.rpc
	}
	if f.escrow != "" {
		cfg.Chain.Contract = f.escrow
	}
	return cfg.Validate()
}

// walletFlags say how to open a keystore wallet.
type walletFlags struct {
	passwordFile string
}

func (f *walletFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.passwordFile, "password-file", "", "file holding the keystore wallet's passphrase (default: env "+passwordEnv+")")
}

// passphrase reads the passphrase from --password-file (its first line) or
// the environment.
func (f *walletFlags) passphrase() (string, error) {
	if f.passwordFile != "" {
		b, err := readSecret(f.passwordFile)
		if err != nil {
			return "", fmt.Errorf("--password-file: %w", err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		return strings.TrimSuffix(line, "\r"), nil
	}
	if p, ok := os.LookupEnv(passwordEnv); ok {
		return p, nil
	}
	return "", fmt.Errorf("%w: give it with --password-file FILE or the %s environment variable", node.ErrNoPassphrase, passwordEnv)
}

// readSecret reads a small file, or stdin for "-".
func readSecret(path string) ([]byte, error) {
	var r io.Reader
	if path == "-" {
		r = os.Stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxSecretFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSecretFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxSecretFile)
	}
	return b, nil
}

// repoConfig reads a repo's config without taking its lock, so wallet and
// stake commands work beside a running daemon.
func repoConfig(dir string) (node.Config, error) {
	path := filepath.Join(dir, node.ConfigFile)
	if _, err := os.Stat(path); err != nil {
		return node.Config{}, fmt.Errorf("%w: %s", node.ErrNoRepo, dir)
	}
	return node.LoadConfig(path)
}

// repoWallet loads the repo's wallet key, asking for a keystore's
// passphrase as wf says.
func repoWallet(dir string, cfg node.Config, wf *walletFlags) (*ecdsa.PrivateKey, error) {
	k, err := node.LoadWallet(dir, cfg, wf.passphrase)
	if err != nil {
		return nil, err
	}
	if k == nil {
		return nil, fmt.Errorf("the repo has no wallet key (it pays %s): run 'jobnode wallet new' or 'jobnode wallet import'", cfg.Processor.Wallet)
	}
	return k, nil
}

// chainSession is a connection to the chain for one command: the escrow
// client (signing with the wallet, or read-only) and a plain client for
// balances.
type chainSession struct {
	esc   *escrow.Client
	eth   *ethclient.Client
	close func()
}

func openChain(ctx context.Context, g *globals, cfg node.Config, key *ecdsa.PrivateKey) (*chainSession, error) {
	if cfg.Chain.RPC == "" {
		return nil, errors.New("no chain: give --eth-rpc URL or set [chain] rpc in the config")
	}
	esc, closeEsc, err := node.OpenEscrow(ctx, cfg.Chain, key, g.logger().With("subsystem", "escrow"))
	if err != nil {
		return nil, err
	}
	eth, err := ethclient.DialContext(ctx, cfg.Chain.RPC)
	if err != nil {
		closeEsc()
		return nil, fmt.Errorf("dial %s: %w", cfg.Chain.RPC, err)
	}
	return &chainSession{esc: esc, eth: eth, close: func() { eth.Close(); closeEsc() }}, nil
}

// ether formats wei as ether for people, beside the exact wei.
func ether(wei *big.Int) string {
	f := new(big.Float).Quo(new(big.Float).SetInt(wei), big.NewFloat(1e18))
	return f.Text('f', 6) + " ETH"
}

func newWalletCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "wallet",
		Short: "The repo's wallet: create, import, show, fund, read balances, withdraw payouts",
		Long: `The repo's wallet receives payouts, pays gas, funds jobs and signs settlements.
'jobnode init' writes a raw key (wallet.key) for development; a keystore
wallet ('wallet new --keystore', or [wallet] keystore in the config) is
encrypted, and its passphrase comes from --password-file or the
` + passwordEnv + ` environment variable.`,
	}
	cmd.AddCommand(newWalletNewCmd(g), newWalletImportCmd(g), newWalletAddressCmd(g),
		newWalletBalanceCmd(g), newWalletWithdrawCmd(g), newWalletFundCmd(g))
	return cmd
}

func newWalletNewCmd(g *globals) *cobra.Command {
	var (
		wf       walletFlags
		keystore bool
		light    bool
	)
	cmd := &cobra.Command{
		Use:   "new",
		Short: "Create a wallet in the repo (refuses to overwrite one)",
		Long: `Create a new wallet key and make it the repo's wallet and payout address.
Without --keystore it is written raw to wallet.key, which must not exist yet
(a fresh 'jobnode init' repo already has one). With --keystore it is written
encrypted to wallet.json; a wallet.key already there stays on disk unused.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := ethcrypto.GenerateKey()
			if err != nil {
				return err
			}
			return installWallet(cmd, g, &wf, key, nil, keystore, light)
		},
	}
	wf.add(cmd.Flags())
	cmd.Flags().BoolVar(&keystore, "keystore", false, "write an encrypted keystore (wallet.json) instead of the raw wallet.key")
	cmd.Flags().BoolVar(&light, "light-kdf", false, "encrypt with cheap scrypt parameters (throw-away development wallets only)")
	return cmd
}

func newWalletImportCmd(g *globals) *cobra.Command {
	var (
		wf       walletFlags
		keystore bool
		light    bool
	)
	cmd := &cobra.Command{
		Use:   "import FILE|-",
		Short: "Import a hex private key or a keystore JSON file as the repo's wallet",
		Long: `Import a wallet from FILE (or stdin with -): either a hex private key
(64 hex digits, optionally 0x-prefixed) or a go-ethereum keystore JSON file.
A keystore is checked with its passphrase and stored as wallet.json; a hex
key is stored raw as wallet.key, or encrypted as wallet.json with --keystore.
Existing wallet files are never overwritten.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := readSecret(args[0])
			if err != nil {
				return err
			}
			if strings.HasPrefix(strings.TrimSpace(string(b)), "{") {
				return installWallet(cmd, g, &wf, nil, b, true, light)
			}
			key, err := node.ParseKeyHex(b)
			if err != nil {
				return err
			}
			return installWallet(cmd, g, &wf, key, nil, keystore, light)
		},
	}
	wf.add(cmd.Flags())
	cmd.Flags().BoolVar(&keystore, "keystore", false, "store a hex key encrypted as wallet.json instead of raw as wallet.key")
	cmd.Flags().BoolVar(&light, "light-kdf", false, "encrypt with cheap scrypt parameters (throw-away development wallets only)")
	return cmd
}

// installWallet makes key (or the keystore file ks) the repo's wallet.
func installWallet(cmd *cobra.Command, g *globals, wf *walletFlags, key *ecdsa.PrivateKey, ks []byte, asKeystore, light bool) error {
	repo, err := node.OpenRepo(g.repo)
	if err != nil {
		return err
	}
	defer repo.Close()
	out := cmd.OutOrStdout()
	if !asKeystore {
		if err := repo.InstallRawWallet(key); err != nil {
			return err
		}
		fmt.Fprintf(out, "wallet %s\nfile %s\n", node.WalletAddress(key), filepath.Join(repo.Dir, node.WalletFile))
		return nil
	}
	pass, err := wf.passphrase()
	if err != nil {
		return err
	}
	if ks == nil {
		if pass == "" {
			return errors.New("refusing an empty passphrase for a new keystore")
		}
		if ks, err = node.EncryptKeystore(key, pass, light); err != nil {
			return err
		}
	}
	if key, err = repo.InstallKeystoreWallet(ks, pass); err != nil {
		return err
	}
	fmt.Fprintf(out, "wallet %s\nfile %s\n", node.WalletAddress(key), filepath.Join(repo.Dir, node.KeystoreFile))
	return nil
}

func newWalletAddressCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "address",
		Short: "Print the repo's wallet address (its payout address)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := repoConfig(g.repo)
			if err != nil {
				return err
			}
			if cfg.Processor.Wallet == "" {
				return errors.New("the repo has no wallet: run 'jobnode wallet new'")
			}
			fmt.Fprintln(cmd.OutOrStdout(), cfg.Processor.Wallet)
			return nil
		},
	}
}

// walletBalance is the output of 'wallet balance --json'; amounts in wei,
// as decimal strings.
type walletBalance struct {
	Address string `json:"address"`
	Balance string `json:"balance"`
	Credit  string `json:"escrow_credit"`
	Staked  string `json:"stake_active"`
	Pending string `json:"stake_pending"`
	Escrow  string `json:"escrow"`
	ChainID string `json:"chain_id"`
}

func newWalletBalanceCmd(g *globals) *cobra.Command {
	var (
		cf     chainFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "balance",
		Short: "Show the wallet's ETH balance, its escrow credit (payouts to withdraw) and its stake",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := cf.config(g.repo)
			if err != nil {
				return err
			}
			if cfg.Processor.Wallet == "" {
				return errors.New("the repo has no wallet: run 'jobnode wallet new'")
			}
			ctx := cmd.Context()
			cs, err := openChain(ctx, g, cfg, nil)
			if err != nil {
				return err
			}
			defer cs.close()
			addr := common.HexToAddress(cfg.Processor.Wallet)
			bal, err := cs.eth.BalanceAt(ctx, addr, nil)
			if err != nil {
				return fmt.Errorf("balance of %s: %w", addr, err)
			}
			credit, err := cs.esc.CreditOf(ctx, addr)
			if err != nil {
				return err
			}
			st, err := cs.esc.StakeOf(ctx, addr)
			if err != nil {
				return err
			}
			b := walletBalance{
				Address: cfg.Processor.Wallet, Balance: bal.String(), Credit: credit.String(),
				Staked: st.Active.String(), Pending: st.Pending.String(),
				Escrow: strings.ToLower(cs.esc.Address().Hex()), ChainID: cs.esc.ChainID().String(),
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return printJSON(out, b)
			}
			fmt.Fprintf(out, "wallet %s\nbalance %s wei (%s)\nescrow credit %s wei (%s)\nstake %s wei active, %s wei cooling down\nescrow %s on chain %s\n",
				b.Address, b.Balance, ether(bal), b.Credit, ether(credit), b.Staked, b.Pending, b.Escrow, b.ChainID)
			return nil
		},
	}
	cf.add(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (amounts in wei, as strings)")
	return cmd
}

func newWalletWithdrawCmd(g *globals) *cobra.Command {
	var (
		cf chainFlags
		wf walletFlags
	)
	cmd := &cobra.Command{
		Use:   "withdraw",
		Short: "Withdraw the wallet's escrow credit (its payouts and refunds) to the wallet",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := cf.config(g.repo)
			if err != nil {
				return err
			}
			key, err := repoWallet(g.repo, cfg, &wf)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			cs, err := openChain(ctx, g, cfg, key)
			if err != nil {
				return err
			}
			defer cs.close()
			addr := cs.esc.From()
			credit, err := cs.esc.CreditOf(ctx, addr)
			if err != nil {
				return err
			}
			if credit.Sign() == 0 {
				return fmt.Errorf("%w: the escrow holds no credit for %s", escrow.ErrNothingToWithdraw, strings.ToLower(addr.Hex()))
			}
			rcpt, err := cs.esc.Withdraw(ctx)
			if err != nil {
				return fmt.Errorf("withdrawing %s wei: %w", credit, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "withdrew %s wei (%s) to %s\ntx %s\n", credit, ether(credit), strings.ToLower(addr.Hex()), rcpt.TxHash.Hex())
			return nil
		},
	}
	cf.add(cmd.Flags())
	wf.add(cmd.Flags())
	return cmd
}

func newWalletFundCmd(g *globals) *cobra.Command {
	var (
		cf     chainFlags
		amount string
		to     string
	)
	cmd := &cobra.Command{
		Use:   "fund",
		Short: "Development only: have a 'jobnode bootstrap --devchain' chain send ETH to the wallet",
		Long: `Ask the dev chain's faucet (jobmesh_fund) to send --amount wei to the repo's
wallet (or --to ADDRESS). It works only against a 'jobnode bootstrap
--devchain' chain; any other chain refuses it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			wei, err := parseWei("amount", amount)
			if err != nil {
				return err
			}
			url := cf.rpc
			if to == "" || url == "" {
				cfg, err := repoConfig(g.repo)
				if err != nil {
					return err
				}
				if to == "" {
					to = cfg.Processor.Wallet
				}
				if url == "" {
					url = cfg.Chain.RPC
				}
			}
			if !common.IsHexAddress(to) {
				return fmt.Errorf("no address to fund (%q): give --to or use a repo with a wallet", to)
			}
			if url == "" {
				return errors.New("no chain: give --eth-rpc URL of a 'jobnode bootstrap --devchain' chain")
			}
			ctx := cmd.Context()
			rc, err := rpc.DialContext(ctx, url)
			if err != nil {
				return fmt.Errorf("dial %s: %w", url, err)
			}
			defer rc.Close()
			addr := common.HexToAddress(to)
			tx, err := escrow.DevFund(ctx, rc, addr, wei)
			if err != nil {
				return err
			}
			bal, err := ethclient.NewClient(rc).BalanceAt(ctx, addr, nil)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "funded %s with %s wei\ntx %s\nbalance %s wei (%s)\n", strings.ToLower(addr.Hex()), wei, tx.Hex(), bal, ether(bal))
			return nil
		},
	}
	cmd.Flags().StringVar(&cf.rpc, "eth-rpc", "", "JSON-RPC endpoint of the dev chain (default [chain] rpc)")
	cmd.Flags().StringVar(&amount, "amount", "", "wei to send (at most 1000 ETH a request)")
	cmd.Flags().StringVar(&to, "to", "", "address to fund (default: the repo's wallet)")
	_ = cmd.MarkFlagRequired("amount")
	return cmd
}
