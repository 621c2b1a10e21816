package processor

import (
	"context"
	"testing"

	"github.com/jobmesh/jobmesh/crdt"
	"github.com/jobmesh/jobmesh/crdt/crdttest"
	"github.com/jobmesh/jobmesh/jobindex"
	"github.com/jobmesh/jobmesh/jobs"
)

// TestStopWhileJoiningEndsTheWait: a stop asked for while the worker was
// still choosing or joining a room (a new job, a request for work outside
// the queues) or a verdict of the job that came meanwhile ends the wait
// that begins after it; with neither, the wait goes on.
func TestStopWhileJoiningEndsTheWait(t *testing.T) {
	newWorker := func() (*Worker, *jobState) {
		js := &jobState{}
		return &Worker{known: map[jobs.ID]*jobState{{1}: js}, wake: make(chan struct{}, 1)}, js
	}
	begin := func(w *Worker, js *jobState, mark uint64) context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		w.beginWait(js, mark, cancel)
		return ctx
	}

	w, js := newWorker()
	mark := w.waitMark()
	if ctx := begin(w, js, mark); ctx.Err() != nil {
		t.Fatal("a wait with no stop since the mark ended at once")
	}

	w, js = newWorker()
	mark = w.waitMark()
	w.interruptWaits() // e.g. a new job is discovered while joining
	if ctx := begin(w, js, mark); ctx.Err() == nil {
		t.Fatal("a stop asked for while joining did not end the wait that followed")
	}

	w, js = newWorker()
	mark = w.waitMark()
	w.mu.Lock()
	js.finished = true // the verdict came while joining
	w.mu.Unlock()
	if ctx := begin(w, js, mark); ctx.Err() == nil {
		t.Fatal("a wait for a room of a finished job did not end at once")
	}

	// A stop during the wait ends it, as before.
	w, js = newWorker()
	ctx := begin(w, js, w.waitMark())
	w.interruptWaits()
	if ctx.Err() == nil {
		t.Fatal("a stop during the wait did not end it")
	}
}

// TestWatchOverflowInterruptsRoomWaits: a watch that overflowed may have
// dropped a request for work, so the worker stops waiting for a room's
// queue and looks, as it does for a request it sees.
func TestWatchOverflowInterruptsRoomWaits(t *testing.T) {
	c := crdttest.New(t, crdttest.Options{Replicas: 1})
	x := jobindex.New(c.Replicas[0].Store)
	interrupted := false
	w := &Worker{known: map[jobs.ID]*jobState{{1}: {stopWait: func() { interrupted = true }}}, wake: make(chan struct{}, 1)}
	changes := make(chan crdt.Change, 2)
	changes <- crdt.Change{Kind: crdt.ChangeOverflow}
	close(changes)
	x.Run(changes, w.noticeRecord, w.interruptWaits)
	if !interrupted {
		t.Fatal("an overflow did not interrupt the wait for a room's queue")
	}
}
