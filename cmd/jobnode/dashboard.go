package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newDashboardCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "Print a one-time link that signs a browser in to the running node's dashboard",
		Long: `Print a one-time link to the running node's dashboard. Opening it signs that
browser in (an HttpOnly session cookie), so that the dashboard can also
cancel jobs and be used from beyond loopback. The link works once, within an
hour; anyone who has it before then can act as this node's wallet.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			l, err := c.Login(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), l)
			}
			fmt.Fprintln(cmd.OutOrStdout(), l.URL)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (url, code, expires)")
	return cmd
}
