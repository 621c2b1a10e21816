package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/spf13/cobra"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/node"
)

func peerIDOf(key crypto.PrivKey) (peer.ID, error) {
	return peer.IDFromPrivateKey(key)
}

func newDaemonCmd(g *globals, use, short string) *cobra.Command {
	var (
		listen    []string
		bootstrap []string
		apiAddr   string
		devchain  string
		cf        chainFlags
		wf        walletFlags
	)
	role := node.RoleProcessor
	switch use {
	case "bootstrap":
		role = node.RoleBootstrap
	case "client":
		role = node.RoleClient
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDaemon(cmd.Context(), g, daemonFlags{role, listen, bootstrap, apiAddr, devchain, cf, wf}, cmd)
		},
	}
	cmd.Flags().StringArrayVar(&listen, "listen", nil, "listen multiaddr (repeatable; default from the config)")
	cmd.Flags().StringArrayVar(&bootstrap, "bootstrap", nil, "bootstrap peer multiaddr, added to the config's (repeatable)")
	cmd.Flags().StringVar(&apiAddr, "api", "", "HTTP API address HOST:PORT (default from the config: 127.0.0.1 with a free port)")
	cf.add(cmd.Flags())
	wf.add(cmd.Flags())
	if role == node.RoleBootstrap {
		cmd.Flags().StringVar(&devchain, "devchain", "", "also serve a development chain (a real in-process EVM with the escrow deployed and funded dev accounts) over JSON-RPC on this loopback HOST:PORT, e.g. 127.0.0.1:8545")
	}
	return cmd
}

// daemonFlags are a daemon command's flags.
type daemonFlags struct {
	role              node.Role
	listen, bootstrap []string
	apiAddr, devchain string
	chain             chainFlags
	wallet            walletFlags
}

func runDaemon(ctx context.Context, g *globals, f daemonFlags, cmd *cobra.Command) (err error) {
	log := g.logger()
	role, listen, bootstrap, apiAddr, devchain := f.role, f.listen, f.bootstrap, f.apiAddr, f.devchain
	if devchain != "" {
		deploy := escrow.DefaultDeployParams()
		dcfg := escrow.DefaultDevChainConfig()
		dcfg.Addr, dcfg.Escrow, dcfg.Logger = devchain, &deploy, log.With("subsystem", "devchain")
		chain, err := escrow.StartDevChain(ctx, dcfg)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, chain.Close()) }()
		fmt.Fprintf(cmd.OutOrStdout(), "devchain %s\nescrow %s\n", chain.URL(), chain.Escrow().Hex())
	}
	repo, err := node.OpenRepo(g.repo)
	if err != nil {
		return err
	}
	defer repo.Close()
	cfg := repo.Config
	if len(listen) > 0 {
		cfg.P2P.Listen = listen
	}
	cfg.P2P.Bootstrap = append(cfg.P2P.Bootstrap, bootstrap...)
	if apiAddr != "" {
		cfg.API.Address = apiAddr
	}
	if err := f.chain.apply(&cfg); err != nil {
		return err
	}
	if role != node.RoleBootstrap && len(cfg.P2P.Bootstrap) == 0 {
		warnAlone(log, cmd.ErrOrStderr(), cfg.P2P.MDNS)
	}
	// Only nodes that use the chain need the wallet key; a keystore then
	// needs its passphrase.
	if role != node.RoleBootstrap && cfg.Chain.RPC != "" {
		repo.Config = cfg
		if err := repo.UnlockWallet(f.wallet.passphrase); err != nil {
			return err
		}
	}
	dstore, err := repo.OpenDatastore()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, dstore.Close()) }()

	n, err := node.New(ctx, node.Params{
		Role: role, Config: cfg, Identity: repo.Identity, WalletKey: repo.WalletKey, Datastore: dstore, Logger: log,
	})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, n.Close()) }()

	acfg := cfg.API
	if acfg.Token, err = repo.APIToken(); err != nil {
		return err
	}
	h, err := api.New(n.APIDeps(), acfg)
	if err != nil {
		return err
	}
	srv, err := api.Listen(cfg.API.Address, h, acfg, log)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = errors.Join(err, srv.Shutdown(sctx))
	}()
	if err := repo.WriteAPIAddr(srv.Addr()); err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "jobnode %s running\npeer id %s\napi %s\n", role, n.Host.ID(), srv.Addr())
	// A one-time link: it signs one browser in ('jobnode dashboard' makes
	// another).
	login, _ := h.LoginURL(srv.BaseURL())
	fmt.Fprintf(out, "dashboard %s\n", login)
	for _, a := range n.Host.FullAddrs() {
		fmt.Fprintf(out, "swarm %s\n", a)
	}
	<-ctx.Done()
	log.Info("shutting down")
	return nil
}

// warnAlone says, in the log and on stderr, that a node with no bootstrap
// peer runs alone: it takes and submits work only once a peer dials it (or,
// with mDNS, one on the local network is found).
func warnAlone(log *slog.Logger, stderr io.Writer, mdns bool) {
	how := "no peer will find it unless one dials it"
	if mdns {
		how = "it finds peers only on the local network (mDNS)"
	}
	msg := "no bootstrap peer: this node runs alone; " + how +
		". Give --bootstrap MULTIADDR or set [p2p] bootstrap in the config ('jobnode id' on a bootstrap node prints its multiaddrs)"
	log.Warn(msg)
	fmt.Fprintln(stderr, "jobnode: warning:", msg)
}
