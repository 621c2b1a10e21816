package processor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/fetch"
)

// ModelFetcherConfig tunes a ModelFetcher.
type ModelFetcherConfig struct {
	// Every is how often the open jobs are checked for models this
	// processor is named to pre-download. Default 5s.
	Every time.Duration
	// Backoff is the wait before a model whose fetch failed is tried
	// again; it doubles after each failure up to MaxBackoff. Default 10s
	// and 10m.
	Backoff    time.Duration
	MaxBackoff time.Duration
	// Timeout bounds the fetch of one model, transfer included. Default
	// 1h: models are large.
	Timeout time.Duration
}

// DefaultModelFetcherConfig returns the defaults documented on
// ModelFetcherConfig.
func DefaultModelFetcherConfig() ModelFetcherConfig {
	return ModelFetcherConfig{Every: 5 * time.Second, Backoff: 10 * time.Second, MaxBackoff: 10 * time.Minute, Timeout: time.Hour}
}

// Validate checks the config.
func (c ModelFetcherConfig) Validate() error {
	if c.Every <= 0 || c.Backoff <= 0 || c.MaxBackoff < c.Backoff || c.Timeout <= 0 {
		return fmt.Errorf("%w: model fetcher periods must be positive, max backoff at least the backoff", ErrInvalidConfig)
	}
	return nil
}

// ModelFetcherParams are what a ModelFetcher works with.
type ModelFetcherParams struct {
	// Worker is the processor whose view and open jobs decide what to
	// fetch, and whose block layer fetches it. Required.
	Worker *Worker
	// Store keeps the fetched models. Required.
	Store *ModelStore
	// Fetched, when set, is called after each model is stored: the node
	// advertises it, so that the next views count this processor as a
	// holder.
	Fetched func(ctx context.Context, model string)
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Registerer receives the jobmesh_models_* metrics. Nil: none.
	Registerer prometheus.Registerer
}

// ModelFetcher pre-downloads models (seed 001): for every open job that
// needs models, it derives from the worker's dispatch view and the job's
// seed which processors should fetch which models (View.PreDownloads, the
// same names on every node), and fetches those named for this processor
// by CID (ipfs://<cid>) into the model store. A failed fetch is logged,
// counted and retried with backoff; it never stops the processor.
type ModelFetcher struct {
	cfg   ModelFetcherConfig
	p     ModelFetcherParams
	log   *slog.Logger
	fetch *fetch.Registry

	fetched prometheus.Counter
	failed  prometheus.Counter
	bytes   prometheus.Gauge

	mu    sync.Mutex
	retry map[string]backoff // by model
}

type backoff struct {
	next time.Time
	wait time.Duration
}

// NewModelFetcher returns a ModelFetcher; Run runs it.
func NewModelFetcher(p ModelFetcherParams, cfg ModelFetcherConfig) (*ModelFetcher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if p.Worker == nil || p.Store == nil {
		return nil, fmt.Errorf("%w: a model fetcher needs a worker and a store", ErrInvalidConfig)
	}
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	log := p.Logger.With("subsystem", "models")
	fcfg := p.Worker.cfg.Fetch
	fcfg.Timeout, fcfg.IPFS, fcfg.Logger, fcfg.Registerer = cfg.Timeout, nil, log, nil
	if p.Worker.p.Blocks != nil {
		fcfg.IPFS = p.Worker.p.Blocks
	}
	reg, err := fetch.New(fcfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	f := &ModelFetcher{cfg: cfg, p: p, log: log, fetch: reg, retry: map[string]backoff{},
		fetched: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "jobmesh", Name: "models_fetched_total",
			Help: "Models this processor pre-downloaded into its model store.",
		}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "jobmesh", Name: "models_fetch_failed_total",
			Help: "Model pre-downloads that failed (each is retried with backoff).",
		}),
		bytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "jobmesh", Name: "models_bytes",
			Help: "Bytes of models in this processor's model store.",
		}),
	}
	if p.Registerer != nil {
		for _, c := range []prometheus.Collector{f.fetched, f.failed, f.bytes} {
			if err := p.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("processor: registering model metrics: %w", err)
			}
		}
	}
	f.bytes.Set(float64(p.Store.Used()))
	return f, nil
}

// Run fetches the models this processor is named for until ctx ends.
func (f *ModelFetcher) Run(ctx context.Context) {
	t := time.NewTicker(f.cfg.Every)
	defer t.Stop()
	for {
		f.step(ctx, time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// wanted lists the models the latest view names this processor to fetch
// for the open jobs it knows, sorted, without those already on disk.
func (f *ModelFetcher) wanted() []string {
	w := f.p.Worker
	v := w.dview.Load()
	if v == nil || v.Kicked(w.self) {
		return nil
	}
	w.mu.Lock()
	var open []*jobState
	for _, js := range w.known {
		if !js.finished && !js.aborted && !js.cancelled && len(js.info.Requirements.ModelCIDs) > 0 {
			open = append(open, js)
		}
	}
	w.mu.Unlock()
	var out []string
	for _, js := range open {
		pds, err := v.PreDownloads(w.cfg.Dispatch, DispatchJob(js.info, js.plan), js.info.Seed[:])
		if err != nil {
			f.log.Warn("deriving model pre-downloads", "job", js.plan.JobID, "err", err)
			continue
		}
		for _, pd := range pds {
			if slices.Contains(pd.Nodes, w.self) && !f.p.Store.Has(pd.Model) {
				out = append(out, pd.Model)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// step fetches, one after another, the wanted models that are not
// backing off; it returns how many it stored.
func (f *ModelFetcher) step(ctx context.Context, now time.Time) int {
	n := 0
	for _, m := range f.wanted() {
		f.mu.Lock()
		b := f.retry[m]
		f.mu.Unlock()
		if now.Before(b.next) {
			continue
		}
		if ctx.Err() != nil {
			return n
		}
		size, err := f.Fetch(ctx, m)
		if err != nil {
			if ctx.Err() != nil {
				return n
			}
			b.wait = min(max(b.wait*2, f.cfg.Backoff), f.cfg.MaxBackoff)
			b.next = now.Add(b.wait)
			f.mu.Lock()
			f.retry[m] = b
			f.mu.Unlock()
			f.failed.Inc()
			f.log.Warn("pre-downloading a model failed; will retry", "model", m, "retry_in", b.wait, "err", err)
			continue
		}
		f.mu.Lock()
		delete(f.retry, m)
		f.mu.Unlock()
		n++
		f.log.Info("model pre-downloaded", "model", m, "bytes", size)
	}
	return n
}

// Fetch fetches one model by its CID through the block layer into the
// store and reports it (ModelFetcherParams.Fetched). A model already on
// disk is not fetched again.
func (f *ModelFetcher) Fetch(ctx context.Context, model string) (int64, error) {
	if err := checkModelCID(model); err != nil {
		return 0, err
	}
	if f.p.Store.Has(model) {
		return 0, nil
	}
	// One byte past the free space tells "fits exactly" from "too big".
	rc, err := f.fetch.Fetch(ctx, "ipfs://"+model, f.p.Store.Free()+1)
	if err != nil {
		if errors.Is(err, fetch.ErrTooLarge) {
			err = fmt.Errorf("%w: model %s: %w", ErrModelStoreFull, model, err)
		}
		return 0, err
	}
	defer rc.Close()
	n, err := f.p.Store.Put(model, rc)
	if err != nil {
		return 0, err
	}
	f.fetched.Inc()
	f.bytes.Set(float64(f.p.Store.Used()))
	if f.p.Fetched != nil {
		f.p.Fetched(ctx, model)
	}
	return n, nil
}
