package groupjob_test

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/test"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/dispatch"
	"github.com/jobmesh/jobmesh/finish"
	"github.com/jobmesh/jobmesh/groupjob"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/meshview"
)

// store is a replicated store and record index that every node of a test
// shares: the records written and the commitments made.
type store struct {
	mu         sync.Mutex
	recs       map[string]crdt.Record
	committers map[jobs.ID][]string
}

func newStore() *store {
	return &store{recs: map[string]crdt.Record{}, committers: map[jobs.ID][]string{}}
}

func (s *store) Query(_ context.Context, prefix string) ([]crdt.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []crdt.Record
	for k, r := range s.recs {
		if strings.HasPrefix(k, prefix) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *store) Progress(_ context.Context, _ jobs.ID, replicas int) (finish.Progress, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := map[jobs.ID][]string{}
	for m, ps := range s.committers {
		c[m] = slices.Sorted(slices.Values(ps))
	}
	return finish.NewProgress(c, 0).WithReplicas(replicas), nil
}

// commit records p's commitment to MicroJob mid.
func (s *store) commit(mid jobs.ID, p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.committers[mid], p) {
		s.committers[mid] = append(s.committers[mid], p)
	}
}

// writer writes into a store as one author.
type writer struct {
	s      *store
	author peer.ID
}

func (w writer) Put(_ context.Context, key, typ string, payload []byte) error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.recs[key] = crdt.Record{Key: key, Type: typ, Author: w.author, Payload: slices.Clone(payload)}
	return nil
}

// clock is a test clock that moves only when told.
type clock struct{ ns atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// mesh is n processors of one card model sharing a store, a view and a
// clock; log holds what they logged.
type mesh struct {
	s     *store
	clock *clock
	log   *bytes.Buffer
	ids   []string
	nodes map[string]*groupjob.Groups
	reg   map[string]*prometheus.Registry
}

const silentAfter = time.Minute

func newMesh(t *testing.T, n int, model string) *mesh {
	t.Helper()
	m := &mesh{s: newStore(), clock: &clock{}, log: &bytes.Buffer{}, nodes: map[string]*groupjob.Groups{}, reg: map[string]*prometheus.Registry{}}
	m.clock.advance(time.Hour)
	var procs []meshview.ProcessorView
	peers := map[string]peer.ID{}
	for range n {
		p := test.RandPeerIDFatal(t)
		peers[p.String()] = p
		m.ids = append(m.ids, p.String())
		procs = append(procs, meshview.ProcessorView{Node: dispatch.Node{ID: p.String(), CardModel: model, VRAM: 8192}, Weight: 1})
	}
	slices.Sort(m.ids)
	var views atomic.Pointer[meshview.View]
	views.Store(meshview.NewView(time.Unix(0, 0), procs))
	logger := slog.New(slog.NewTextHandler(m.log, nil))
	for _, id := range m.ids {
		reg := prometheus.NewRegistry()
		g, err := groupjob.New(groupjob.Params{Self: id, Records: m.s, Writer: writer{m.s, peers[id]}, Progress: m.s,
			Views: &views, Now: m.clock.Now, Logger: logger, Registerer: reg},
			groupjob.Config{CardModel: model, VRAMMiB: 8192, SilentAfter: silentAfter})
		if err != nil {
			t.Fatal(err)
		}
		m.nodes[id], m.reg[id] = g, reg
	}
	return m
}

// workers are the processors that may work on the job now.
func (m *mesh) workers(info *jobs.JobInfo, plan *jobs.Plan) []string {
	var out []string
	for _, id := range m.ids {
		if m.nodes[id].MayWork(context.Background(), info, plan) {
			out = append(out, id)
		}
	}
	return out
}

// events is how often processor id counted a group event.
func (m *mesh) events(t *testing.T, id, event string) float64 {
	t.Helper()
	mfs, err := m.reg[id].Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			for _, l := range mt.GetLabel() {
				if l.GetName() == "event" && l.GetValue() == event {
					return mt.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func planOf(t testing.TB, info *jobs.JobInfo) *jobs.Plan {
	t.Helper()
	plan, err := jobs.SliceChecked(info, info.SeedCommitment)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}
