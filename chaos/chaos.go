package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	mocknet "github.com/libp2p/go-libp2p/p2p/net/mock"

	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/processor"
)

// run is one chaos run in progress.
type run struct {
	cfg  Config
	mesh *localmesh.Mesh
	mn   mocknet.Mocknet
	job  picture
	// lie is each member's liar kind this job: 0 honest, 1 byzantine,
	// 2 rational. Its processor's Tamper reads it at every block.
	lie []atomic.Int32
	// keys are the escrow keys of the run's jobs, for the books.
	keys []common.Hash
	// restaked counts the stakes topped up after a slash (restake).
	restaked int
	// droppedGone counts the messages dropped by members before they
	// were stopped (a restarted member's counters start again).
	droppedGone float64
}

// Run starts a mesh of cfg.Processors processors, a client and the
// embedded chain on a mock network, runs cfg.Jobs jobs one after
// another under the faults Draw gives each, and checks every job's
// invariants. An error is a run that could not go on (the mesh did not
// start, a job could not be submitted); a broken invariant is a
// violation in the report.
func Run(ctx context.Context, cfg Config) (Report, error) {
	cfg.applyDefaults()
	if err := cfg.Validate(); err != nil {
		return Report{}, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "jobmesh-chaos-")
		if err != nil {
			return Report{}, fmt.Errorf("chaos: %w", err)
		}
		defer os.RemoveAll(dir)
		cfg.Dir = dir
	}
	pic, err := newPicture(ctx, cfg)
	if err != nil {
		return Report{}, err
	}
	r := &run{cfg: cfg, mn: mocknet.New(), job: pic}
	defer r.mn.Close()
	r.lie = make([]atomic.Int32, cfg.Processors+2)
	if r.mesh, err = localmesh.Start(ctx, r.options()); err != nil {
		return Report{}, fmt.Errorf("chaos: starting the mesh: %w", err)
	}
	defer r.mesh.Close()
	if err := r.waitFormed(ctx); err != nil {
		return Report{}, err
	}
	rep := Report{Config: cfg}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x63686173))
	for j := range cfg.From {
		Draw(rng, cfg, j)
	}
	for j := cfg.From; j < cfg.From+cfg.Jobs; j++ {
		jr, err := r.runJob(ctx, j, Draw(rng, cfg, j))
		if err != nil {
			return rep, err
		}
		rep.Jobs = append(rep.Jobs, jr)
		if cfg.Progress != nil {
			cfg.Progress(jr)
		}
	}
	if err := r.books(ctx); err != nil {
		rep.Violations = append(rep.Violations, err.Error())
	}
	rep.Dropped, rep.Restaked = r.dropped(), r.restaked
	return rep, nil
}

// options are the mesh's: short timers, the run's message loss, and a
// Tamper on every processor that lies when its member is a liar.
func (r *run) options() localmesh.Options {
	c := r.cfg
	return localmesh.Options{
		Processors: c.Processors,
		Clients:    1,
		Dir:        c.Dir,
		Mocknet:    r.mn,
		Logger:     c.Logger,
		Chain:      &localmesh.ChainOptions{},
		P2P: func(_ *localmesh.Member, pc *p2p.Config) {
			if c.Drop > 0 {
				pc.DropInbound = c.Drop
			}
		},
		Processor: func(mem *localmesh.Member, pc *processor.Config) {
			pc.Poll = 200 * time.Millisecond
			pc.Room.Queue.ProcessingTimeout = c.ProcessingTimeout
			pc.Room.LockTTL = c.ProcessingTimeout
			pc.Room.Queue.OwnerTimeout = 2 * time.Second
			pc.Room.Queue.Rebroadcast = 300 * time.Millisecond
			pc.RevealTimeout = 5 * time.Second
			pc.DiscloseGrace = 5 * time.Second
			pc.RerunTimeout = 5 * time.Second
			pc.FundingBackoff = 200 * time.Millisecond
			pc.Tamper = r.tamper(mem.Index)
		},
	}
}

// tamper is member i's output rewrite: none while it is honest.
func (r *run) tamper(i int) func(uint64, bool, []byte) []byte {
	rational := localmesh.RationalLiar(uint64(r.cfg.K))
	return func(block uint64, check bool, out []byte) []byte {
		switch r.lie[i].Load() {
		case 1:
			return append(out, 0xff)
		case 2:
			return rational(block, check, out)
		}
		return out
	}
}

// waitFormed waits until the client sees every processor's advert.
func (r *run) waitFormed(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return until(ctx, func() error {
		ads, err := r.client().Processors(ctx)
		if err != nil {
			return err
		}
		if len(ads) < r.cfg.Processors {
			return fmt.Errorf("chaos: the client sees %d of %d processors", len(ads), r.cfg.Processors)
		}
		return nil
	})
}

func (r *run) client() *localmesh.Member { return r.mesh.Members[len(r.mesh.Members)-1] }

// until calls f every 100ms until it returns nil or ctx ends, and then
// returns f's last error.
func until(ctx context.Context, f func() error) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-t.C:
		}
	}
}

// spec is the run's job, at a price of 1 gwei.
func (r *run) spec() dapp.Spec {
	return dapp.Spec{
		Code: r.job.code, Data: r.job.data,
		Slicing:  jobs.Slicing{BlockSize: r.job.blockSize, MicroJobs: r.cfg.N, BlocksPerMicro: r.cfg.K},
		Price:    big.NewInt(1_000_000_000),
		Deadline: time.Now().Add(time.Hour),
		Output:   jobs.Output{Kind: jobs.OutputPNGGrid, Columns: r.cfg.Columns},
	}
}

// dropped is the number of messages the run's loss dropped, over the
// running members.
func (r *run) dropped() float64 {
	n := r.droppedGone
	for _, mem := range r.mesh.Running() {
		n += counter(mem.Node, "jobmesh_p2p_fault_dropped_total")
	}
	return n
}

// counter sums a counter of a node's registry.
func counter(n *node.Node, name string) float64 {
	mfs, err := n.Metrics.Gather()
	if err != nil {
		return 0
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}
