package processor

import (
	"context"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
	"github.com/jobmesh/jobmesh/p2p"
)

// jobChannel joins the Job channel of js once and starts reading it; the
// first join asks the channel for open rooms, since the store may lag.
func (w *Worker) jobChannel(ctx context.Context, js *jobState) *p2p.Topic[jobs.ChannelMsg] {
	w.mu.Lock()
	t := js.topic
	w.mu.Unlock()
	if t != nil {
		return t
	}
	t, err := jobs.JoinJobTopic(w.p.Host, js.plan.JobID)
	if err != nil {
		w.log.Warn("joining the job channel", "job", js.plan.JobID, "err", err)
		return nil
	}
	w.mu.Lock()
	js.topic = t
	js.announced = map[uint64]roomSeen{}
	js.claims = map[uint64]map[string]time.Time{}
	w.mu.Unlock()
	w.wg.Add(1)
	go w.readJobChannel(w.runCtx, js, t)
	_ = t.Publish(ctx, jobs.ChannelMsg{Kind: jobs.KindRooms, JobID: js.plan.JobID.String()})
	return t
}

type roomSeen struct {
	owner string
	at    time.Time
}

func (w *Worker) readJobChannel(ctx context.Context, js *jobState, t *p2p.Topic[jobs.ChannelMsg]) {
	defer w.wg.Done()
	id := js.plan.JobID.String()
	for {
		m, err := t.Next(ctx)
		if err != nil {
			return
		}
		if m.Local || m.Value.JobID != id {
			continue
		}
		switch m.Value.Kind {
		case jobs.KindRoom:
			switch {
			case m.Value.Macro >= uint64(len(js.plan.Macros)):
			case m.Value.Open > 0:
				w.mu.Lock()
				js.announced[m.Value.Macro] = roomSeen{owner: m.Value.Processor, at: w.now()}
				w.mu.Unlock()
				w.poke()
			default: // open 0: a claim (openRoom)
				w.mu.Lock()
				if js.claims[m.Value.Macro] == nil {
					js.claims[m.Value.Macro] = map[string]time.Time{}
				}
				js.claims[m.Value.Macro][m.Value.Processor] = w.now()
				w.mu.Unlock()
			}
		case jobs.KindRooms:
			w.announceRooms(ctx, js, t)
		case jobs.KindFinalizing:
			js.hints.Finalizing(m.Value.Processor, w.now())
		case jobs.KindProgress:
			if !replicated(js) { // hints count for jobs with R = 1 only
				w.heardProgress(js, m.Value)
			}
			w.poke()
		}
	}
}

// heardProgress records the MicroJobs of the job's plan that a progress
// message says its processor completed, and that the processor is active.
func (w *Worker) heardProgress(js *jobState, m jobs.ChannelMsg) {
	var micros []jobs.ID
	for _, s := range m.Micros() {
		mid, err := jobs.ParseHash(s)
		if err != nil {
			continue
		}
		if _, err := js.plan.MicroJob(mid); err != nil {
			continue
		}
		micros = append(micros, mid)
	}
	js.hints.Progress(m.Processor, micros, w.now())
}

// announceRooms tells the Job channel which of the job's rooms this node
// is in and how much is left in each.
func (w *Worker) announceRooms(ctx context.Context, js *jobState, t *p2p.Topic[jobs.ChannelMsg]) {
	w.mu.Lock()
	var rooms []*macrojob.Room
	for _, r := range w.rooms {
		rooms = append(rooms, r)
	}
	w.mu.Unlock()
	for _, m := range js.plan.Macros {
		name := macrojob.RoomName(js.plan.JobID.String(), m.Index)
		for _, r := range rooms {
			if r.Name == name && !r.Done() {
				_ = t.Publish(ctx, jobs.ChannelMsg{Kind: jobs.KindRoom, JobID: js.plan.JobID.String(), Macro: m.Index, Processor: w.self, Open: 1})
			}
		}
	}
}

// announcedOwner returns the owner a recent room announcement named.
func (w *Worker) announcedOwner(js *jobState, macro uint64, now time.Time) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, ok := js.announced[macro]
	if !ok || now.Sub(s.at) > w.lockTTL() {
		return "", false
	}
	return s.owner, true
}

// heardDone returns the MicroJobs of js heard complete on the Job
// channel by processors still alive (finish.Hints.Done).
func (w *Worker) heardDone(js *jobState) map[jobs.ID]bool {
	now := w.now()
	return js.hints.Done(now, w.cfg.DiscloseGrace, func(p string, last time.Time) bool { return w.alive(js, p, last, now) })
}

// alive reports whether processor p, last heard on the Job channel at
// last, is connected to this node or has been heard from (there or in the
// store) within DiscloseGrace of now.
func (w *Worker) alive(js *jobState, p string, last, now time.Time) bool {
	if w.connected(p) {
		return true
	}
	if h := w.index.LastHeard(js.plan.JobID, p); h.After(last) {
		last = h
	}
	return now.Sub(last) < w.cfg.DiscloseGrace
}

// connected reports whether processor p is connected to this node.
func (w *Worker) connected(p string) bool {
	if w.p.Host == nil {
		return false
	}
	id, err := peer.Decode(p)
	return err == nil && w.p.Host.Network().Connectedness(id) == network.Connected
}
