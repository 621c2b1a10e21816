package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobmesh/jobmesh/escrow"
	"github.com/jobmesh/jobmesh/node"
)

func newEscrowCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "escrow",
		Short: "The escrow contract: deploy it to a chain",
	}
	cmd.AddCommand(newEscrowDeployCmd(g))
	return cmd
}

func newEscrowDeployCmd(g *globals) *cobra.Command {
	var (
		rpc      string
		minStake string
		quorum   string
		cooldown time.Duration
		noWrite  bool
		wf       walletFlags
	)
	def := escrow.DefaultDeployParams()
	cmd := &cobra.Command{
		Use:   "deploy",
		Short: "Deploy a new escrow contract, paid from the repo's wallet, and write its address into the config",
		Long: `Deploy the escrow contract (escrow/contracts/Escrow.sol, as compiled into
this binary) to the chain at --eth-rpc (default [chain] rpc), paying the gas
from the repo's wallet, which must hold ETH on that chain. It prints the
contract's address and writes --eth-rpc and the address into the repo's
[chain] section, so later commands need neither flag. Every node of a mesh
must use the same contract: give the others its address with
'jobnode init --eth-rpc URL --escrow ADDRESS'.

The constructor's parameters are fixed for the contract's life: the stake a
processor needs for its settlement signatures to count (--min-stake), the
share of a job's members that must sign its settlement (--quorum, at least
2/3) and how long an unstake stays locked and slashable (--unstake-cooldown).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := escrow.DefaultDeployParams()
			var err error
			if p.MinStake, err = parseWei("min-stake", minStake); err != nil {
				return err
			}
			if p.QuorumNumerator, p.QuorumDenominator, err = parseQuorum(quorum); err != nil {
				return err
			}
			if cooldown < 0 {
				return flagError("unstake-cooldown", "%s is negative", cooldown)
			}
			p.UnstakeCooldown = cooldown
			if err := p.Validate(); err != nil {
				return usageError(err)
			}
			// The repo stays locked from before the deployment until its
			// address is written, so no daemon starts on it meanwhile.
			repo, err := node.OpenRepo(g.repo)
			if err != nil {
				return err
			}
			defer repo.Close()
			cc := repo.Config.Chain
			if rpc != "" {
				cc.RPC = rpc
			}
			if cc.RPC == "" {
				return flagError("eth-rpc", "missing: give the chain's JSON-RPC URL, or set [chain] rpc in the config")
			}
			if err := repo.UnlockWallet(wf.passphrase); err != nil {
				return err
			}
			if repo.WalletKey == nil {
				return errors.New("the repo's wallet is an address without a key: deploying needs a key ('jobnode wallet new' or 'wallet import')")
			}
			rcpt, err := node.DeployEscrow(cmd.Context(), cc, repo.WalletKey, p, g.logger().With("subsystem", "escrow"))
			if err != nil {
				return err
			}
			addr := rcpt.ContractAddress.Hex()
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "escrow %s\ntx %s\ngas %d\n", addr, rcpt.TxHash.Hex(), rcpt.GasUsed)
			if noWrite {
				return nil
			}
			cc.Contract = addr
			if err := repo.SetChain(cc); err != nil {
				return fmt.Errorf("escrow %s deployed, but writing it into the config failed: %w", addr, err)
			}
			fmt.Fprintf(out, "config %s: [chain] rpc = %q, contract = %q\n", filepath.Join(repo.Dir, node.ConfigFile), cc.RPC, addr)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&rpc, "eth-rpc", "", "JSON-RPC endpoint of the chain (default [chain] rpc)")
	f.StringVar(&minStake, "min-stake", def.MinStake.String(), "stake in wei a processor needs for its settlement signatures to count (e.g. 1e18)")
	f.StringVar(&quorum, "quorum", fmt.Sprintf("%d/%d", def.QuorumNumerator, def.QuorumDenominator), "share N/D of a job's members that must sign its settlement, at least 2/3")
	f.DurationVar(&cooldown, "unstake-cooldown", def.UnstakeCooldown, "how long requested unstakes stay locked and slashable (whole seconds)")
	f.BoolVar(&noWrite, "no-write", false, "only print the address; leave the config as it is")
	wf.add(f)
	return cmd
}

// parseQuorum reads --quorum N/D.
func parseQuorum(s string) (num, den uint64, err error) {
	n, d, ok := strings.Cut(s, "/")
	if ok {
		num, err = strconv.ParseUint(strings.TrimSpace(n), 10, 64)
		if err == nil {
			den, err = strconv.ParseUint(strings.TrimSpace(d), 10, 64)
		}
	}
	if !ok || err != nil || den == 0 || num > den || 3*num < 2*den {
		return 0, 0, flagError("quorum", "%q: want N/D with 2/3 <= N/D <= 1, e.g. 2/3", s)
	}
	return num, den, nil
}
