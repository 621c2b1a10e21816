package models

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/fetch"
)

// Assigner names what this processor is to pre-download: the processor's
// worker, which knows the open jobs and the dispatch view the names are
// derived from.
type Assigner interface {
	// Self is this processor's peer ID.
	Self() string
	// PreDownloads are the pre-download names of every open job that
	// needs models, from the latest dispatch view ("Who pre-downloads"
	// in docs/PROTOCOL.md); none when there is no view or this processor
	// is kicked out. A job whose names cannot be derived is left out and
	// reported in the error.
	PreDownloads() ([]dispatch.PreDownload, error)
}

// FetcherConfig tunes a Fetcher.
type FetcherConfig struct {
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

// DefaultFetcherConfig returns the defaults documented on FetcherConfig.
func DefaultFetcherConfig() FetcherConfig {
	return FetcherConfig{Every: 5 * time.Second, Backoff: 10 * time.Second, MaxBackoff: 10 * time.Minute, Timeout: time.Hour}
}

// Validate checks the config.
func (c FetcherConfig) Validate() error {
	if c.Every <= 0 || c.Backoff <= 0 || c.MaxBackoff < c.Backoff || c.Timeout <= 0 {
		return fmt.Errorf("%w: model fetcher periods must be positive, max backoff at least the backoff", ErrInvalidConfig)
	}
	return nil
}

// FetcherParams are what a Fetcher works with.
type FetcherParams struct {
	// Assigner names the models to fetch. Required.
	Assigner Assigner
	// Store keeps the fetched models. Required.
	Store *Store
	// Blocks is the block layer models are fetched through by CID. Nil:
	// no model can be fetched (every try fails and backs off).
	Blocks fetch.IPFS
	// Fetched, when set, is called after each model is stored: the node
	// advertises it, so that the next views count this processor as a
	// holder.
	Fetched func(ctx context.Context, model string)
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Registerer receives the jobmesh_models_* metrics. Nil: none.
	Registerer prometheus.Registerer
}

// Fetcher pre-downloads models (seed 001): for every open job that needs
// models, the assigner derives from its dispatch view and the job's seed
// which processors should fetch which models (the same names on every
// node), and the fetcher fetches those named for this processor by CID
// (ipfs://<cid>) into the store. A failed fetch is logged, counted and
// retried with backoff; it never stops the processor.
type Fetcher struct {
	cfg   FetcherConfig
	p     FetcherParams
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

// NewFetcher returns a Fetcher; Run runs it.
func NewFetcher(p FetcherParams, cfg FetcherConfig) (*Fetcher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if p.Assigner == nil || p.Store == nil {
		return nil, fmt.Errorf("%w: a model fetcher needs an assigner and a store", ErrInvalidConfig)
	}
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	log := p.Logger.With("subsystem", "models")
	// Models come by ipfs:// only: the other schemes' settings do not
	// matter.
	fcfg := fetch.DefaultConfig()
	fcfg.Timeout, fcfg.IPFS, fcfg.Logger = cfg.Timeout, p.Blocks, log
	reg, err := fetch.New(fcfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	f := &Fetcher{cfg: cfg, p: p, log: log, fetch: reg, retry: map[string]backoff{},
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
				return nil, fmt.Errorf("models: registering metrics: %w", err)
			}
		}
	}
	f.bytes.Set(float64(p.Store.Used()))
	return f, nil
}

// Run fetches the models this processor is named for until ctx ends.
func (f *Fetcher) Run(ctx context.Context) {
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

// wanted lists the models the assigner names this processor to fetch,
// sorted, without those already on disk.
func (f *Fetcher) wanted() []string {
	pds, err := f.p.Assigner.PreDownloads()
	if err != nil {
		f.log.Warn("deriving model pre-downloads", "err", err)
	}
	return Named(f.p.Assigner.Self(), pds, f.p.Store.Has)
}

// step fetches, one after another, the wanted models that are not
// backing off; it returns how many it stored.
func (f *Fetcher) step(ctx context.Context, now time.Time) int {
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
// store and reports it (FetcherParams.Fetched). A model already on
// disk is not fetched again.
func (f *Fetcher) Fetch(ctx context.Context, model string) (int64, error) {
	if err := checkCID(model); err != nil {
		return 0, err
	}
	if f.p.Store.Has(model) {
		return 0, nil
	}
	// One byte past the free space tells "fits exactly" from "too big".
	rc, err := f.fetch.Fetch(ctx, "ipfs://"+model, f.p.Store.Free()+1)
	if err != nil {
		if errors.Is(err, fetch.ErrTooLarge) {
			err = fmt.Errorf("%w: model %s: %w", ErrStoreFull, model, err)
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
