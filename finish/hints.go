package finish

import (
	"maps"
	"sync"
	"time"

	"github.com/jobmesh/jobmesh/jobs"
)

// HintLife is how many DiscloseGrace periods a MicroJob heard complete
// counts as done at most without its commitment in the store.
const HintLife = 10

// Hints is what a node heard on a job's Job channel: the MicroJobs a
// processor said complete (a room's owner the MicroJobs of its done room,
// a verifier's runner that verifier), when each such processor was last
// heard there, and who said it is finishing the job (Input.Finalizing).
//
// The Job channel runs ahead of the store: under load a commitment may
// reach another processor's store a minute or more after its committer
// said on the channel that the MicroJob is complete. Until then a
// processor that trusted the store alone would take the MicroJob's room
// again and run it twice, adding to the load that delays the store. So a
// MicroJob heard complete counts as done while its processor is alive:
// connected to the node, or heard from (on the channel, or new records
// in the store) within DiscloseGrace. The hint lapses when the processor
// is gone (it may have stopped before its commitment replicated), and in
// any case HintLife graces after it was heard, so a live processor that
// claims work it never commits delays that work only so long; the
// MicroJob is then taken again.
//
// The zero Hints is empty. Its methods may be called concurrently; it
// calls nobody back while it holds its lock.
type Hints struct {
	mu sync.Mutex
	// done is, for each MicroJob heard complete, who said so and when.
	done map[jobs.ID]heard
	// active is when each processor that said so was last heard.
	active map[string]time.Time
	// finalizing is when each processor was last heard finishing the job.
	finalizing map[string]time.Time
}

// heard is one MicroJob heard complete on the Job channel.
type heard struct {
	processor string
	at        time.Time
}

// Progress records that processor said at now it completed micros
// (MicroJobs of the job's plan), and so that it is active.
func (h *Hints) Progress(processor string, micros []jobs.ID, now time.Time) {
	if len(micros) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done == nil {
		h.done, h.active = map[jobs.ID]heard{}, map[string]time.Time{}
	}
	for _, mid := range micros {
		h.done[mid] = heard{processor: processor, at: now}
	}
	h.active[processor] = now
}

// Active returns when each processor heard completing MicroJobs was last
// heard. The map is the caller's.
func (h *Hints) Active() map[string]time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.active)
}

// Finalizing records that processor said at now it is finishing the job.
func (h *Hints) Finalizing(processor string, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.finalizing == nil {
		h.finalizing = map[string]time.Time{}
	}
	h.finalizing[processor] = now
}

// Finalizers returns when each processor was last heard finishing the
// job (Input.Finalizing). The map is the caller's.
func (h *Hints) Finalizers() map[string]time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.finalizing)
}

// Done returns the MicroJobs heard complete within HintLife graces of
// now by processors still alive. alive is asked once per processor, with
// when it was last heard on the channel, and with Hints' lock released.
func (h *Hints) Done(now time.Time, grace time.Duration, alive func(p string, last time.Time) bool) map[jobs.ID]bool {
	h.mu.Lock()
	fresh := make(map[jobs.ID]heard, len(h.done))
	for mid, hd := range h.done {
		if now.Sub(hd.at) < HintLife*grace {
			fresh[mid] = hd
		}
	}
	active := maps.Clone(h.active)
	h.mu.Unlock()
	done := make(map[jobs.ID]bool, len(fresh))
	live := map[string]bool{} // by processor: one question each per call
	for mid, hd := range fresh {
		ok, seen := live[hd.processor]
		if !seen {
			ok = alive(hd.processor, active[hd.processor])
			live[hd.processor] = ok
		}
		if ok {
			done[mid] = true
		}
	}
	return done
}
