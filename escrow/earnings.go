package escrow

import (
	"context"
	"fmt"
	"log/slog"
	"math/big"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/prometheus/client_golang/prometheus"
)

// Earnings is what an account has on the escrow: its credit (settlement
// payouts and refunds it has not withdrawn) and the sum of its
// withdrawals.
type Earnings struct {
	Credit    *big.Int
	Withdrawn *big.Int
}

// Credited is everything the escrow ever credited the account: its credit
// and what it has withdrawn.
func (e Earnings) Credited() *big.Int { return new(big.Int).Add(e.Credit, e.Withdrawn) }

// EarningsOf reads account's credit and sums its Withdrawn events.
func (c *Client) EarningsOf(ctx context.Context, account common.Address) (Earnings, error) {
	credit, err := c.CreditOf(ctx, account)
	if err != nil {
		return Earnings{}, fmt.Errorf("escrow: credit of %s: %w", account, err)
	}
	logs, err := c.logs(ctx, "Withdrawn", nil, common.BytesToHash(account.Bytes()))
	if err != nil {
		return Earnings{}, fmt.Errorf("escrow: withdrawals of %s: %w", account, err)
	}
	withdrawn := new(big.Int)
	for i := range logs {
		e, err := c.bindings.UnpackWithdrawnEvent(&logs[i])
		if err != nil {
			return Earnings{}, fmt.Errorf("escrow: withdrawal of %s in block %d: %w", account, logs[i].BlockNumber, err)
		}
		withdrawn.Add(withdrawn, e.Amount)
	}
	return Earnings{Credit: credit, Withdrawn: withdrawn}, nil
}

// EarningsWatch keeps an account's earnings as gauges, read from the
// chain by Refresh (Run calls it periodically), so that a scrape never
// waits on the chain. The gauges are in wei, as float64: exact up to
// 2^53 wei (about 0.009 ether), to 16 significant digits above.
type EarningsWatch struct {
	c       *Client
	account common.Address
	log     *slog.Logger

	credit, withdrawn, credited prometheus.Gauge

	mu   sync.Mutex
	last Earnings
	at   time.Time
}

// NewEarningsWatch registers the gauges of account's earnings with reg
// (nil keeps them local). One process watches one account: a second watch
// on the same registry is refused.
func NewEarningsWatch(c *Client, account common.Address, reg prometheus.Registerer) (*EarningsWatch, error) {
	g := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "jobmesh", Subsystem: "escrow", Name: name, Help: help})
	}
	w := &EarningsWatch{
		c: c, account: account, log: c.log,
		credit:    g("credit_wei", "This node's wallet's credit on the escrow, in wei: payouts and refunds not withdrawn yet."),
		withdrawn: g("withdrawn_wei", "Wei this node's wallet has withdrawn from the escrow (its Withdrawn events)."),
		credited:  g("credited_wei", "Wei the escrow has credited this node's wallet in all: credit_wei plus withdrawn_wei."),
	}
	if w.log == nil {
		w.log = slog.Default()
	}
	if reg != nil {
		for _, m := range []prometheus.Collector{w.credit, w.withdrawn, w.credited} {
			if err := reg.Register(m); err != nil {
				return nil, fmt.Errorf("escrow: earnings metrics: %w", err)
			}
		}
	}
	return w, nil
}

// Refresh reads the account's earnings and sets the gauges.
func (w *EarningsWatch) Refresh(ctx context.Context) (Earnings, error) {
	e, err := w.c.EarningsOf(ctx, w.account)
	if err != nil {
		return Earnings{}, err
	}
	w.credit.Set(weiFloat(e.Credit))
	w.withdrawn.Set(weiFloat(e.Withdrawn))
	w.credited.Set(weiFloat(e.Credited()))
	w.mu.Lock()
	w.last, w.at = e, time.Now()
	w.mu.Unlock()
	return e, nil
}

// Last returns the earnings the latest successful Refresh read, and when;
// ok is false before the first.
func (w *EarningsWatch) Last() (e Earnings, at time.Time, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.at.IsZero() {
		return Earnings{}, time.Time{}, false
	}
	return Earnings{Credit: new(big.Int).Set(w.last.Credit), Withdrawn: new(big.Int).Set(w.last.Withdrawn)}, w.at, true
}

// Run refreshes at once and then every interval until ctx ends. A failed
// read is logged and leaves the gauges as they were.
func (w *EarningsWatch) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := w.Refresh(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("reading this wallet's earnings", "account", w.account, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func weiFloat(x *big.Int) float64 {
	f, _ := new(big.Float).SetInt(x).Float64()
	return f
}
