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

// jobChannel joins the Job channel of js once and starts reading it. It
// asks nothing: a processor that finds a room neither locked in its store
// nor announced claims it before opening it, and the room's owner answers
// the claim (readJobChannel).
func (w *Worker) jobChannel(ctx context.Context, js *jobState) *p2p.Topic[jobs.ChannelMsg] {
	w.mu.Lock()
	t := js.topic
	w.mu.Unlock()
	if t != nil {
		return t
	}
	t, err := jobs.JoinJobTopic(w.p.Host, js.plan().JobID)
	if err != nil {
		w.log.Warn("joining the job channel", "job", js.plan().JobID, "err", err)
		return nil
	}
	w.mu.Lock()
	js.topic = t
	js.announced = map[uint64]roomSeen{}
	js.claims = map[uint64]map[string]time.Time{}
	w.mu.Unlock()
	w.wg.Add(1)
	go w.readJobChannel(w.runCtx, js, t)
	return t
}

// jobChannelKind names m's kind for the Job channel's metric: a room
// announcement with nothing open is a claim (openRoom). DecodeChannelMsg
// has refused unknown kinds, so the label's values are bounded.
func jobChannelKind(m jobs.ChannelMsg) string {
	if m.Kind == jobs.KindRoom && m.Open == 0 {
		return "claim"
	}
	return m.Kind
}

type roomSeen struct {
	owner string
	at    time.Time
}

func (w *Worker) readJobChannel(ctx context.Context, js *jobState, t *p2p.Topic[jobs.ChannelMsg]) {
	defer w.wg.Done()
	id := js.plan().JobID.String()
	for {
		m, err := t.Next(ctx)
		if err != nil {
			return
		}
		if m.Local || m.Value.JobID != id {
			continue
		}
		w.m.jobChannel.WithLabelValues(jobChannelKind(m.Value)).Inc()
		switch m.Value.Kind {
		case jobs.KindRoom:
			switch {
			case m.Value.Macro >= uint64(len(js.plan().Macros)):
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
				_, member := w.rooms[macrojob.RoomName(id, m.Value.Macro)]
				w.mu.Unlock()
				// The claimant sees the room neither locked nor
				// announced: its owner tells it, within the claim's
				// pause when the window is quiet, as it answers rooms.
				if member {
					w.answerRooms(ctx, js, t, m.From.String())
				}
			}
		case jobs.KindRooms: // this release does not ask, but any node may
			w.answerRooms(ctx, js, t, m.From.String())
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
		if _, err := js.plan().MicroJob(mid); err != nil {
			continue
		}
		micros = append(micros, mid)
	}
	js.hints.Progress(m.Processor, micros, w.now())
}

// answerRooms answers asker's claim or request with announceRooms, at
// most once per ProgressWindow however many ask (windowBatch).
func (w *Worker) answerRooms(ctx context.Context, js *jobState, t *p2p.Topic[jobs.ChannelMsg], asker string) {
	w.windowed(ctx, &js.asked, []string{asker}, func(ctx context.Context, _ []string) { w.announceRooms(ctx, js, t) })
}

// announceRooms tells the Job channel which of the job's rooms this node
// owns the queue of, each once: the owner answers for its room, not every
// member, so that a request costs the channel one message per open room.
func (w *Worker) announceRooms(ctx context.Context, js *jobState, t *p2p.Topic[jobs.ChannelMsg]) {
	id := js.plan().JobID.String()
	for _, m := range js.plan().Macros {
		w.mu.Lock()
		r := w.rooms[macrojob.RoomName(id, m.Index)]
		w.mu.Unlock()
		if r == nil || r.Done() {
			continue
		}
		if owner, err := r.Owner(ctx); err == nil && owner == macrojob.PeerID(w.self) {
			_ = t.Publish(ctx, jobs.ChannelMsg{Kind: jobs.KindRoom, JobID: id, Macro: m.Index, Processor: w.self, Open: 1})
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
	if h := w.index.LastHeard(js.plan().JobID, p); h.After(last) {
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
