package main

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/spf13/cobra"

	"github.com/jobmesh/jobmesh/escrow"
)

// stakeStatus is the output of 'stake status --json'; amounts in wei, as
// decimal strings.
type stakeStatus struct {
	Address  string `json:"address"`
	Active   string `json:"active"`
	Pending  string `json:"pending"`
	UnlockAt string `json:"unlock_at,omitempty"` // RFC 3339, while pending
	MinStake string `json:"min_stake"`
	Counted  bool   `json:"counted"` // active ≥ min stake: settlement signatures count
}

// stakeCmd is what every stake subcommand shares: the repo, chain and
// wallet flags.
type stakeCmd struct {
	g  *globals
	cf chainFlags
	wf walletFlags
}

// open connects to the chain; with sign, the wallet key signs.
func (s *stakeCmd) open(ctx context.Context, sign bool) (*chainSession, common.Address, error) {
	cfg, err := repoConfig(s.g.repo)
	if err != nil {
		return nil, common.Address{}, err
	}
	if err := s.cf.apply(&cfg); err != nil {
		return nil, common.Address{}, err
	}
	if cfg.Processor.Wallet == "" {
		return nil, common.Address{}, errors.New("the repo has no wallet: run 'jobnode wallet new'")
	}
	var key *ecdsa.PrivateKey
	if sign {
		if key, err = repoWallet(s.g.repo, cfg, &s.wf); err != nil {
			return nil, common.Address{}, err
		}
	}
	cs, err := openChain(ctx, s.g, cfg, key)
	if err != nil {
		return nil, common.Address{}, err
	}
	return cs, common.HexToAddress(cfg.Processor.Wallet), nil
}

func newStakeCmd(g *globals) *cobra.Command {
	s := &stakeCmd{g: g}
	var amount string
	cmd := &cobra.Command{
		Use:   "stake",
		Short: "Stake ETH in the escrow so this processor's settlement signatures count",
		Long: `'jobnode stake --amount WEI' stakes from the repo's wallet. A processor's
settlement signature counts only while its active stake is at least the
escrow's minimum stake, and a processor the mesh proves dishonest loses its
stake. 'stake unstake' starts the cool-down; 'stake withdraw' takes the
stake back once it is over. These commands talk to the chain directly and
need no running daemon.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if amount == "" {
				return errors.New("give --amount WEI to stake, or a subcommand: status, unstake, withdraw")
			}
			wei, err := parseWei("amount", amount)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			cs, addr, err := s.open(ctx, true)
			if err != nil {
				return err
			}
			defer cs.close()
			bal, err := cs.eth.BalanceAt(ctx, addr, nil)
			if err != nil {
				return fmt.Errorf("balance of %s: %w", addr, err)
			}
			if bal.Cmp(wei) <= 0 {
				return fmt.Errorf("%w: staking %s wei (%s) needs that plus gas; %s holds %s wei (%s)",
					escrow.ErrInsufficientFunds, wei, ether(wei), strings.ToLower(addr.Hex()), bal, ether(bal))
			}
			rcpt, err := cs.esc.Stake(ctx, wei)
			if err != nil {
				return fmt.Errorf("staking %s wei: %w", wei, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "staked %s wei (%s)\ntx %s\n", wei, ether(wei), rcpt.TxHash.Hex())
			return printStakeStatus(ctx, cmd, cs, addr, false)
		},
	}
	cmd.Flags().StringVar(&amount, "amount", "", "wei to stake, e.g. 1000000000000000000 or 1e18")
	s.cf.add(cmd.PersistentFlags())
	s.wf.add(cmd.PersistentFlags())
	cmd.AddCommand(s.statusCmd(), s.unstakeCmd(), s.withdrawCmd())
	return cmd
}

func (s *stakeCmd) statusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the wallet's active stake, the stake cooling down and when it unlocks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cs, addr, err := s.open(ctx, false)
			if err != nil {
				return err
			}
			defer cs.close()
			return printStakeStatus(ctx, cmd, cs, addr, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (amounts in wei, as strings)")
	return cmd
}

func printStakeStatus(ctx context.Context, cmd *cobra.Command, cs *chainSession, addr common.Address, asJSON bool) error {
	st, err := cs.esc.StakeOf(ctx, addr)
	if err != nil {
		return err
	}
	minStake, err := cs.esc.MinStake(ctx)
	if err != nil {
		return err
	}
	out := stakeStatus{
		Address: strings.ToLower(addr.Hex()), Active: st.Active.String(), Pending: st.Pending.String(),
		MinStake: minStake.String(), Counted: st.Active.Cmp(minStake) >= 0,
	}
	if st.Pending.Sign() > 0 {
		out.UnlockAt = st.UnlockAt.UTC().Format(time.RFC3339)
	}
	w := cmd.OutOrStdout()
	if asJSON {
		return printJSON(w, out)
	}
	fmt.Fprintf(w, "wallet %s\nactive %s wei (%s)\nminimum %s wei (%s)\n", out.Address, out.Active, ether(st.Active), out.MinStake, ether(minStake))
	if !out.Counted {
		fmt.Fprintf(w, "below the minimum: this processor's settlement signatures do not count\n")
	}
	if st.Pending.Sign() > 0 {
		fmt.Fprintf(w, "cooling down %s wei (%s), unlocks %s (%s)\n", out.Pending, ether(st.Pending), out.UnlockAt, cooldownLeft(st.UnlockAt))
	}
	return nil
}

// cooldownLeft says how long until t, for people.
func cooldownLeft(t time.Time) string {
	left := time.Until(t)
	if left <= 0 {
		return "withdrawable now"
	}
	return left.Round(time.Second).String() + " left"
}

func (s *stakeCmd) unstakeCmd() *cobra.Command {
	var amount string
	cmd := &cobra.Command{
		Use:   "unstake",
		Short: "Start the cool-down for --amount of the active stake (withdraw it after with 'stake withdraw')",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			wei, err := parseWei("amount", amount)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			cs, addr, err := s.open(ctx, true)
			if err != nil {
				return err
			}
			defer cs.close()
			st, err := cs.esc.StakeOf(ctx, addr)
			if err != nil {
				return err
			}
			if st.Active.Cmp(wei) < 0 {
				return fmt.Errorf("%w: unstaking %s wei, but only %s wei is active", escrow.ErrInsufficientStake, wei, st.Active)
			}
			rcpt, err := cs.esc.RequestUnstake(ctx, wei)
			if err != nil {
				return fmt.Errorf("unstaking %s wei: %w", wei, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "unstaking %s wei (%s)\ntx %s\n", wei, ether(wei), rcpt.TxHash.Hex())
			return printStakeStatus(ctx, cmd, cs, addr, false)
		},
	}
	cmd.Flags().StringVar(&amount, "amount", "", "wei to unstake")
	_ = cmd.MarkFlagRequired("amount")
	return cmd
}

func (s *stakeCmd) withdrawCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "withdraw",
		Short: "Withdraw the stake whose cool-down is over",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cs, addr, err := s.open(ctx, true)
			if err != nil {
				return err
			}
			defer cs.close()
			st, err := cs.esc.StakeOf(ctx, addr)
			if err != nil {
				return err
			}
			if st.Pending.Sign() == 0 {
				return fmt.Errorf("%w: no stake is cooling down (start with 'jobnode stake unstake --amount WEI')", escrow.ErrNothingToWithdraw)
			}
			// The contract compares with the block time; the next block is
			// at least the head's time, and at least now on a live chain.
			head, err := cs.eth.HeaderByNumber(ctx, nil)
			if err != nil {
				return err
			}
			now := time.Unix(int64(head.Time), 0)
			if wall := time.Now(); wall.After(now) {
				now = wall
			}
			if now.Before(st.UnlockAt) {
				return fmt.Errorf("%w: cool-down not over, %s left (%s wei unlocks at %s)",
					escrow.ErrStakeLocked, st.UnlockAt.Sub(now).Round(time.Second), st.Pending, st.UnlockAt.UTC().Format(time.RFC3339))
			}
			rcpt, err := cs.esc.WithdrawStake(ctx)
			if errors.Is(err, escrow.ErrStakeLocked) {
				return fmt.Errorf("cool-down not over (unlocks at %s): %w", st.UnlockAt.UTC().Format(time.RFC3339), err)
			}
			if err != nil {
				return fmt.Errorf("withdrawing stake: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "withdrew %s wei (%s) of stake\ntx %s\n", st.Pending, ether(st.Pending), rcpt.TxHash.Hex())
			return nil
		},
	}
}
