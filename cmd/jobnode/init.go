package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/p2p"
)

func newInitCmd(g *globals) *cobra.Command {
	var (
		bootstrap []string
		listen    []string
		card      string
		vram      uint64
		wallet    string
		ethRPC    string
		escrowHex string
		chainID   uint64
	)
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create a repo: identity, documented config file and datastore",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := node.DefaultConfig()
			if len(listen) > 0 {
				cfg.P2P.Listen = listen
			}
			cfg.P2P.Bootstrap = append(cfg.P2P.Bootstrap, bootstrap...)
			if card != "" {
				cfg.Processor.CardModel = card
			}
			cfg.Processor.VRAMMiB = vram
			cfg.Processor.Wallet = wallet
			cfg.Chain.RPC, cfg.Chain.Contract, cfg.Chain.ChainID = ethRPC, escrowHex, chainID
			if escrowHex != "" && ethRPC == "" {
				return usageError(errors.New("--escrow needs --eth-rpc: the contract is on that chain"))
			}
			if err := node.InitRepo(g.repo, cfg); err != nil {
				return err
			}
			key, err := p2p.LoadIdentity(filepath.Join(g.repo, node.IdentityFile))
			if err != nil {
				return err
			}
			id, err := peerIDOf(key)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "initialised repo %s\npeer id %s\nconfig %s\napi token %s\n",
				g.repo, id, filepath.Join(g.repo, node.ConfigFile), filepath.Join(g.repo, node.APITokenFile))
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&bootstrap, "bootstrap", nil, "bootstrap peer multiaddr to write into the config (repeatable)")
	cmd.Flags().StringArrayVar(&listen, "listen", nil, "listen multiaddr to write into the config (repeatable)")
	cmd.Flags().StringVar(&card, "card-model", "", `card model to advertise (default "cpu")`)
	cmd.Flags().Uint64Var(&vram, "vram-mib", 0, "VRAM to advertise, in MiB")
	cmd.Flags().StringVar(&wallet, "wallet", "", "EVM address that receives payouts")
	cmd.Flags().StringVar(&ethRPC, "eth-rpc", "", "JSON-RPC endpoint of the chain, written to [chain] rpc (commands then need no --eth-rpc)")
	cmd.Flags().StringVar(&escrowHex, "escrow", "", "escrow contract address 0x..., written to [chain] contract ('jobnode escrow deploy' writes it too)")
	cmd.Flags().Uint64Var(&chainID, "chain-id", 0, "chain ID the endpoint must report, written to [chain] chain_id (0: any)")
	return cmd
}
