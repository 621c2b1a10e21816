package processor

import (
	"context"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/macrojob"
	"github.com/jobmesh/jobmesh/p2p"
)

// JobTopic is the Job channel of one job: rooms are announced and asked for
// there, and processors say when they completed a MicroJob (seed 004).
func JobTopic(id jobs.ID) string { return p2p.TopicPrefix + "job/" + id.String() }

// jobChannel joins the Job channel of js once and starts reading it; the
// first join asks the channel for open rooms, since the store may lag.
func (w *Worker) jobChannel(ctx context.Context, js *jobState) *p2p.Topic[jobs.ChannelMsg] {
	w.mu.Lock()
	t := js.topic
	w.mu.Unlock()
	if t != nil {
		return t
	}
	t, err := p2p.Join(w.p.Host, p2p.TopicConfig[jobs.ChannelMsg]{
		Name:    JobTopic(js.plan.JobID),
		Kind:    "job",
		MaxSize: jobs.MaxChannelMsg,
		Encode:  jobs.EncodeChannelMsg,
		Decode:  jobs.DecodeChannelMsg,
		Check: func(from peer.ID, m jobs.ChannelMsg) error {
			if m.Kind != jobs.KindRooms && m.Kind != jobs.KindRoom && m.Kind != jobs.KindProgress {
				return jobs.ErrBadMessage
			}
			return jobs.CheckSender(from.String(), m)
		},
		Buffer: 256,
	})
	if err != nil {
		w.log.Warn("joining the job channel", "job", js.plan.JobID, "err", err)
		return nil
	}
	w.mu.Lock()
	js.topic = t
	js.announced = map[uint64]roomSeen{}
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
			if m.Value.Macro < uint64(len(js.plan.Macros)) && m.Value.Open > 0 {
				w.mu.Lock()
				js.announced[m.Value.Macro] = roomSeen{owner: m.Value.Processor, at: time.Now()}
				w.mu.Unlock()
				w.poke()
			}
		case jobs.KindRooms:
			w.announceRooms(ctx, js, t)
		case jobs.KindProgress:
			w.poke()
		}
	}
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
