package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/jobmesh/jobmesh/apiv1"
)

// defaultFetchTimeout is how long job submit lets the node read code and
// data named by URI unless --fetch-timeout says otherwise.
const defaultFetchTimeout = 2 * time.Minute

// waitNoteEvery is how often job submit says it still waits for the node
// to read content named by URI.
const waitNoteEvery = 5 * time.Second

// setFetchTimeout sets req's fetch_timeout_s from --fetch-timeout d.
func setFetchTimeout(req *apiv1.SubmitRequest, d time.Duration) error {
	max := apiv1.MaxFetchTimeoutS * time.Second
	if d < 0 || d > max {
		return flagError("fetch-timeout", "%s outside 0..%s", d, max)
	}
	req.FetchTimeoutS = uint32((d + time.Second - 1) / time.Second)
	return nil
}

// remoteSources are the URIs of req's code and data that the node reads
// (local files were uploaded, and are held by the node itself).
func remoteSources(code, data string, req apiv1.SubmitRequest) []string {
	var out []string
	if isURI(code) {
		out = append(out, "--code "+req.Code.URI)
	}
	if isURI(data) {
		out = append(out, "--data "+req.Data.URI)
	}
	return out
}

// noteWaiting writes to w, at each tick until stop is called, that the
// node is still reading what, with the time spent and the limit (0: the
// node's). stop waits until no more is written; it may be called again.
func noteWaiting(w io.Writer, what []string, limit time.Duration, ticks <-chan time.Time) (stop func()) {
	if len(what) == 0 {
		return func() {}
	}
	start := time.Now()
	quit, done := make(chan struct{}), make(chan struct{})
	lim := "the node's limit"
	if limit > 0 {
		lim = limit.String()
	}
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case now := <-ticks:
				fmt.Fprintf(w, "waiting for the node to read %s: %s so far, at most %s (--fetch-timeout)\n",
					strings.Join(what, " and "), now.Sub(start).Round(time.Second), lim)
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(quit); <-done }) }
}
