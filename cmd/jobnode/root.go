package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/jobmesh/jobmesh/node"
)

// errSilent marks an error already reported to the user.
var errSilent = errors.New("reported")

type globals struct {
	repo string
	// apiURL is --api of the client commands; empty: the repo's api file.
	apiURL string
	// logLevel and logFormat are the flags; empty: the repo config's
	// [log] section.
	logLevel, logFormat string
	// stderr is where logs go: the command's stderr.
	stderr io.Writer
}

func defaultRepo() string {
	if r := os.Getenv("JOBMESH_REPO"); r != "" {
		return r
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ".jobmesh"
	}
	return filepath.Join(home, ".jobmesh")
}

func newRootCmd() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "jobnode",
		Short:         "jobmesh node: a peer-to-peer compute job mesh",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildVersion().text(),
	}
	root.SetVersionTemplate("{{.Version}}")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	root.PersistentFlags().StringVar(&g.repo, "repo", defaultRepo(), "repo directory (env JOBMESH_REPO)")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "", `log level: debug, info, warn, error (default: [log] level in the config, "info")`)
	root.PersistentFlags().StringVar(&g.logFormat, "log-format", "", `log format on stderr: text or json (default: [log] format in the config, "text")`)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		g.stderr = cmd.ErrOrStderr()
		return g.checkLogFlags()
	}
	root.AddCommand(
		newInitCmd(g),
		newDaemonCmd(g, "bootstrap", "Run a bootstrap node: a stable DHT server with peer exchange"),
		newDaemonCmd(g, "process", "Run a processor: advertise this node's hardware and take work (it can submit jobs too)"),
		newDaemonCmd(g, "client", "Run a client: join the mesh and submit jobs, without processing"),
		addAPIFlag(g, newIDCmd(g)),
		addAPIFlag(g, newPeersCmd(g)),
		addAPIFlag(g, newNodesCmd(g)),
		addAPIFlag(g, newQueueCmd(g)),
		newDemoCmd(g),
		newWalletCmd(g),
		newStakeCmd(g),
		newEscrowCmd(g),
		newExampleCmd(),
		addAPIFlag(g, newJobCmd(g)),
		addAPIFlag(g, newDashboardCmd(g)),
		newCheckSimCmd(),
		newChaosCmd(),
		newVersionCmd(),
	)
	return root
}

// checkLogFlags refuses a bad --log-level or --log-format.
func (g *globals) checkLogFlags() error {
	if g.logLevel != "" {
		if _, err := node.ParseLogLevel(g.logLevel); err != nil {
			return usageError(fmt.Errorf("--log-level: %w", err))
		}
	}
	if g.logFormat != "" && g.logFormat != node.LogFormatText && g.logFormat != node.LogFormatJSON {
		return usageError(fmt.Errorf("--log-format %q: want text or json", g.logFormat))
	}
	return nil
}

// logConfig is the repo config's [log] section (the defaults when the repo
// has no readable config) with the flags applied.
func (g *globals) logConfig() node.LogConfig {
	lc := node.DefaultLogConfig()
	if cfg, err := repoConfig(g.repo); err == nil {
		lc = cfg.Log
	}
	if g.logLevel != "" {
		lc.Level = g.logLevel
	}
	if g.logFormat != "" {
		lc.Format = g.logFormat
	}
	return lc
}

// logger logs to the command's stderr as logConfig says.
func (g *globals) logger() *slog.Logger {
	return g.loggerFor(g.logConfig())
}

// demoLogger is the demo's nodes' logger: quiet (errors only) unless
// --log-level says otherwise; the repo config is not read.
func (g *globals) demoLogger() *slog.Logger {
	lc := node.LogConfig{Level: g.logLevel, Format: g.logFormat}
	if lc.Level == "" {
		lc.Level = "error"
	}
	if lc.Format == "" {
		lc.Format = node.LogFormatText
	}
	return g.loggerFor(lc)
}

func (g *globals) loggerFor(lc node.LogConfig) *slog.Logger {
	w := g.stderr
	if w == nil {
		w = os.Stderr
	}
	return slog.New(lc.Handler(w))
}
