package node

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/models"
	"github.com/jobmesh/jobmesh/processor"
)

// startModels opens a processor's model store and starts pre-downloading
// into it; each stored model is advertised at once.
func (n *Node) startModels(ctx context.Context, cfg Config, pc processor.Config, log *slog.Logger, reg prometheus.Registerer) error {
	dir := cfg.Processor.ModelDir
	if dir == "" {
		return nil
	}
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("%w: [processor] model_dir %q is relative; open the config through its repo, which resolves it", ErrInvalidConfig, dir)
	}
	store, err := models.OpenStore(dir, cfg.Processor.MaxModelBytes)
	if err != nil {
		return err
	}
	if used, budget := store.Used(), cfg.Processor.MaxModelBytes; used > budget {
		n.Log.Warn("the model store holds more than max_model_bytes; no model is fetched until there is room", "used", used, "max_model_bytes", budget)
	}
	mcfg := models.DefaultFetcherConfig()
	// The names depend on the dispatch view, which changes this often.
	mcfg.Every = pc.FactsEvery
	f, err := models.NewFetcher(models.FetcherParams{
		Assigner: n.Worker, Store: store, Blocks: n.IPFS, Logger: log, Registerer: reg,
		Fetched: func(ctx context.Context, model string) {
			if err := n.Advertise(ctx); err != nil && ctx.Err() == nil {
				n.Log.Warn("advertising a fetched model", "model", model, "err", err)
			}
		},
	}, mcfg)
	if err != nil {
		return err
	}
	n.Models, n.models = store, f
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		f.Run(ctx)
	}()
	return nil
}

// FetchModel fetches a model by its CID through the block layer into the
// model store and advertises it, as a pre-download does: an operator
// placing a model ahead of demand. A model already on disk is kept.
func (n *Node) FetchModel(ctx context.Context, model string) error {
	if n.models == nil {
		return fmt.Errorf("%w: this node has no model store (a processor with [processor] model_dir)", ErrInvalidConfig)
	}
	if _, err := n.models.Fetch(ctx, model); err != nil {
		return err
	}
	return n.Advertise(ctx)
}
