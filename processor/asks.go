package processor

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/records"
)

// Re-runners are drawn among every candidate of the mesh
// (finish.RerunOrder), but with job stores a processor holds a job's
// store, where the requests are, only when it could serve the job. A
// requester therefore also names the peers it asked in its ask record
// (records.Ask) in the mesh store, and a processor named there joins the
// job's store, where it finds the request and answers it as any
// re-runner does (doReruns).

// ask adds peers to this processor's ask record of job id, when the node
// keeps job stores. The record holds every peer asked so far (at most
// records.MaxAsked: the newest asked first when it would hold more).
func (w *Worker) ask(ctx context.Context, id jobs.ID, peers []string) {
	if w.p.Jobs == nil || len(peers) == 0 {
		return
	}
	key := records.AskKey(id, w.self)
	var had []string
	if r, err := w.p.Store.Get(ctx, key); err == nil {
		if a, err := records.DecodeAsk(id, r.Payload); err == nil {
			had = a.Peers
		}
	}
	all := slices.Compact(slices.Sorted(slices.Values(slices.Concat(peers, had))))
	if slices.Equal(all, had) {
		return
	}
	if len(all) > records.MaxAsked {
		all = slices.Compact(slices.Sorted(slices.Values(peers)))
		for _, p := range had {
			if len(all) < records.MaxAsked && !slices.Contains(all, p) {
				all = append(all, p)
			}
		}
		all = all[:min(len(all), records.MaxAsked)]
	}
	b, err := records.EncodeAsk(id, all)
	if err == nil {
		err = w.p.Store.Put(ctx, key, records.AskType, b)
	}
	if err != nil && ctx.Err() == nil {
		w.log.Warn("writing the ask record: re-runners outside the job's store may not answer", "job", id, "err", err)
	}
}

// noticeAsk joins the store of the ask record r's job, once, when the
// record names this processor and the job is known, open and within
// this node's per-block limits.
func (w *Worker) noticeAsk(r crdt.Record) {
	if w.p.Jobs == nil {
		return
	}
	k, err := records.Parse(r.Key)
	if err != nil || k.Type != records.AskType || k.Peer != r.AuthorText() {
		return
	}
	a, err := records.DecodeAsk(k.Job, r.Payload)
	if err != nil || !slices.Contains(a.Peers, w.self) {
		return
	}
	w.mu.Lock()
	js := w.known[k.Job]
	if js == nil || js.askJoined || js.finished || js.aborted || !w.now().Before(time.Unix(js.info.Deadline, 0)) || microjob.Exceeds(js.info, w.cfg.Wasm) {
		w.mu.Unlock()
		return
	}
	js.askJoined = true
	w.mu.Unlock()
	w.log.Info("asked to re-run blocks of a job: joining its store", "job", k.Job, "by", r.Author)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		if err := w.p.Jobs.Join(w.runCtx, k.Job); err != nil && w.runCtx.Err() == nil {
			w.log.Warn("joining the store of a job asked of this processor", "job", k.Job, "err", err)
		}
		w.poke()
	}()
}

// askKey reports whether key is an ask record's, /jobs/<id>/ask/<peer>.
func askKey(key string) bool {
	rest, ok := strings.CutPrefix(key, records.JobsPrefix+"/")
	if !ok {
		return false
	}
	s := strings.Split(rest, "/")
	return len(s) == 3 && s[1] == "ask"
}
