package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/localmesh"
)

func newDemoCmd(g *globals) *cobra.Command {
	var (
		processors int
		serve      bool
		dir        string
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a whole mesh in this process on 127.0.0.1: a bootstrap node and processors",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if processors < 1 {
				return fmt.Errorf("--processors must be at least 1")
			}
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			if dir == "" {
				if dir, err = os.MkdirTemp("", "jobmesh-demo-"); err != nil {
					return err
				}
				defer os.RemoveAll(dir)
			}
			fmt.Fprintf(out, "starting a mesh of 1 bootstrap node and %d processors in %s\n", processors, dir)
			mesh, err := localmesh.Start(ctx, localmesh.Options{Processors: processors, Dir: dir, Logger: g.logger()})
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, mesh.Close()) }()

			var servers []*api.Server
			defer func() {
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				for _, s := range servers {
					_ = s.Shutdown(sctx)
				}
			}()
			for _, m := range mesh.Members {
				s, err := api.Listen("127.0.0.1:0", api.NewHandler(m.Node), g.logger())
				if err != nil {
					return err
				}
				servers = append(servers, s)
			}

			start := time.Now()
			fmt.Fprintln(out, "waiting until every node sees every processor in the replicated store...")
			err = wait.For(60*time.Second, func() error {
				for _, m := range mesh.Members {
					ads, err := m.Processors(ctx)
					if err != nil {
						return err
					}
					if len(ads) != processors {
						return fmt.Errorf("node %d sees %d of %d processors", m.Index, len(ads), processors)
					}
				}
				return ctx.Err()
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "mesh converged in %s\n\n", time.Since(start).Round(time.Millisecond))
			for i, m := range mesh.Members {
				fmt.Fprintf(out, "%-9s %d  %s\n          api   %s\n", m.Role, m.Index, m.Host.ID(), servers[i].Addr())
				for _, a := range m.Host.FullAddrs() {
					fmt.Fprintf(out, "          swarm %s\n", a)
				}
			}
			if !serve {
				return nil
			}
			fmt.Fprintln(out, "\nserving; press Ctrl-C to stop")
			<-ctx.Done()
			return nil
		},
	}
	cmd.Flags().IntVar(&processors, "processors", 4, "number of processors")
	cmd.Flags().BoolVar(&serve, "serve", false, "keep the mesh running and serve each node's API")
	cmd.Flags().StringVar(&dir, "dir", "", "directory for the members' repos (default: a temporary directory, removed at exit)")
	return cmd
}
